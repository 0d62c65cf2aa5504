/* GPU architecture descriptions: loader, validator, search path, and Eq. 7.1-7.2 helpers.
 * File format: arch/README.md. */
#define _POSIX_C_SOURCE 200809L

#include "schedpredict/arch.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SP_ARCH_INSTALL_DIR
#define SP_ARCH_INSTALL_DIR "/usr/local/share/schedpredict/arch"
#endif

/* ---------------------------------------------------------------------------------------------- */
/* errors */

static int fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt,
                ...) {
  if (err && errlen > 0) {
    int k = field ? snprintf(err, errlen, "%s: field '%s': ", path, field)
                  : snprintf(err, errlen, "%s: ", path);
    if (k >= 0 && (size_t)k < errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

static const char *json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "an unknown JSON value";
}

/* ---------------------------------------------------------------------------------------------- */
/* the field table */

enum ftype { FT_INT, FT_I64, FT_DOUBLE, FT_BOOL, FT_CC, FT_L1POL, FT_L2POL, FT_CARVEOUTS, FT_DEALING,
             FT_BW_CURVE, FT_DRIFT_CURVE, FT_WALK_CURVE, FT_FP_OP };
enum { F_NULLABLE = 1, F_ZERO_OK = 2, F_OPTIONAL = 4 /* may be absent: stays 0 */ };

typedef struct fdesc {
  const char *key;
  enum ftype type;
  size_t off;
  unsigned flags;
} fdesc;

#define F(key, type, member, flags) {key, type, offsetof(sp_arch, member), flags}
static const fdesc k_fields[] = {
    F("compute_capability", FT_CC, cc_major, 0),
    F("sm_count", FT_INT, sm_count, 0),
    F("warp_size", FT_INT, warp_size, 0),
    F("max_threads_per_sm", FT_INT, max_threads_per_sm, 0),
    F("max_blocks_per_sm", FT_INT, max_blocks_per_sm, 0),
    F("max_warps_per_sm", FT_INT, max_warps_per_sm, 0),
    F("max_threads_per_block", FT_INT, max_threads_per_block, 0),
    F("registers_per_sm", FT_INT, registers_per_sm, 0),
    F("max_registers_per_thread", FT_INT, max_registers_per_thread, 0),
    F("register_alloc_unit", FT_INT, register_alloc_unit, 0),
    F("warp_alloc_granularity", FT_INT, warp_alloc_granularity, 0),
    F("shared_per_sm_bytes", FT_I64, shared_per_sm_bytes, 0),
    F("shared_per_block_bytes", FT_I64, shared_per_block_bytes, 0),
    F("shared_reserved_per_block_bytes", FT_I64, shared_reserved_per_block_bytes, F_ZERO_OK),
    F("shared_alloc_unit_bytes", FT_I64, shared_alloc_unit_bytes, 0),
    F("shared_carveouts_bytes", FT_CARVEOUTS, shared_carveouts_bytes, 0),
    F("l1_shared_unified_bytes", FT_I64, l1_shared_unified_bytes, 0),
    F("l1_bytes", FT_I64, l1_bytes, 0),
    F("l1_assoc", FT_INT, l1_assoc, F_NULLABLE),
    F("l1_line_bytes", FT_INT, l1_line_bytes, 0),
    F("l1_sector_bytes", FT_INT, l1_sector_bytes, 0),
    F("l1_caches_global_loads", FT_BOOL, l1_caches_global_loads, 0),
    F("l1_store_policy", FT_L1POL, l1_store_policy, 0),
    F("l2_bytes", FT_I64, l2_bytes, 0),
    F("l2_reuse_bytes", FT_I64, l2_reuse_bytes, F_OPTIONAL),
    F("l2_reuse_set_sectors", FT_I64, l2_reuse_set_sectors, F_OPTIONAL),
    F("l2_partitions", FT_INT, l2_partitions, 0),
    F("l2_assoc", FT_INT, l2_assoc, F_NULLABLE),
    F("l2_line_bytes", FT_INT, l2_line_bytes, 0),
    F("l2_sector_bytes", FT_INT, l2_sector_bytes, 0),
    F("l2_fill_bytes", FT_INT, l2_fill_bytes, F_OPTIONAL),
    F("l2_store_policy", FT_L2POL, l2_store_policy, 0),
    F("l1_hit_latency_cycles", FT_DOUBLE, l1_hit_latency_cycles, 0),
    F("l2_hit_latency_cycles", FT_DOUBLE, l2_hit_latency_cycles, 0),
    F("l2_far_hit_latency_cycles", FT_DOUBLE, l2_far_hit_latency_cycles, F_NULLABLE),
    F("dram_latency_cycles", FT_DOUBLE, dram_latency_cycles, 0),
    F("l1_bw_bytes_per_cycle", FT_DOUBLE, l1_bw_bytes_per_cycle, 0),
    F("l2_bw_gbs", FT_DOUBLE, l2_bw_gbs, 0),
    F("dram_bw_gbs", FT_DOUBLE, dram_bw_gbs, 0),
    F("l2_bw_by_sms_gbs", FT_BW_CURVE, l2_bw_by_sms, F_OPTIONAL),
    F("dram_bw_by_sms_gbs", FT_BW_CURVE, dram_bw_by_sms, F_OPTIONAL),
    F("dram_drift_slowdown_32b", FT_DRIFT_CURVE, dram_drift_32b, F_OPTIONAL),
    F("dram_drift_slowdown_64b", FT_DRIFT_CURVE, dram_drift_64b, F_OPTIONAL),
    F("dram_walk_slowdown_32b", FT_WALK_CURVE, dram_walk_32b, F_OPTIONAL),
    F("dram_walk_slowdown_64b", FT_WALK_CURVE, dram_walk_64b, F_OPTIONAL),
    F("dram_walk_copy_slowdown_32b", FT_WALK_CURVE, dram_walk_copy_32b, F_OPTIONAL),
    F("dram_walk_copy_slowdown_64b", FT_WALK_CURVE, dram_walk_copy_64b, F_OPTIONAL),
    F("dram_walk_slowdown_128b", FT_WALK_CURVE, dram_walk_wide[0], F_OPTIONAL),
    F("dram_walk_slowdown_256b", FT_WALK_CURVE, dram_walk_wide[1], F_OPTIONAL),
    F("dram_walk_slowdown_512b", FT_WALK_CURVE, dram_walk_wide[2], F_OPTIONAL),
    F("dram_walk_copy_slowdown_128b", FT_WALK_CURVE, dram_walk_copy_wide[0], F_OPTIONAL),
    F("dram_walk_copy_slowdown_256b", FT_WALK_CURVE, dram_walk_copy_wide[1], F_OPTIONAL),
    F("dram_walk_copy_slowdown_512b", FT_WALK_CURVE, dram_walk_copy_wide[2], F_OPTIONAL),
    F("clock_boost_mhz", FT_DOUBLE, clock_boost_mhz, 0),
    F("clock_base_mhz", FT_DOUBLE, clock_base_mhz, 0),
    F("memory_bytes", FT_I64, memory_bytes, 0),
    F("same_address_atomic_ns", FT_DOUBLE, same_address_atomic_ns, F_OPTIONAL),
    F("cas_shared_ns", FT_DOUBLE, cas_shared_ns, F_OPTIONAL),
    F("cas_global_base_ns", FT_DOUBLE, cas_global_base_ns, F_OPTIONAL),
    F("cas_global_per_contender_ns", FT_DOUBLE, cas_global_per_contender_ns, F_OPTIONAL),
    F("warp_loads_in_flight", FT_DOUBLE, warp_loads_in_flight, F_OPTIONAL),
    F("loop_iteration_cycles", FT_DOUBLE, loop_iteration_cycles, F_OPTIONAL),
    F("fp64_op", FT_FP_OP, fp_op[0], F_OPTIONAL),
    F("fp64_div_op", FT_FP_OP, fp_op[1], F_OPTIONAL),
    F("fp64_sqrt_op", FT_FP_OP, fp_op[2], F_OPTIONAL),
    F("fp64_special_op", FT_FP_OP, fp_op[3], F_OPTIONAL),
    F("fp32_op", FT_FP_OP, fp_op[4], F_OPTIONAL),
    F("fp32_div_op", FT_FP_OP, fp_op[5], F_OPTIONAL),
    F("fp32_sqrt_op", FT_FP_OP, fp_op[6], F_OPTIONAL),
    F("fp32_special_op", FT_FP_OP, fp_op[7], F_OPTIONAL),
    F("l2_partial_write_ns", FT_DOUBLE, l2_partial_write_ns, F_OPTIONAL),
    F("block_dispatch_ns", FT_DOUBLE, block_dispatch_ns, F_OPTIONAL),
    F("empty_block_ns", FT_DOUBLE, empty_block_ns, F_OPTIONAL),
    F("block_dealing_cycle", FT_DEALING, block_dealing_cycle, F_OPTIONAL),
};
#undef F
#define N_FIELDS (sizeof k_fields / sizeof k_fields[0])

/* Top-level keys that are not figures. */
static const char *const k_plain_keys[] = {"schema", "name", "full_name", "notes"};
#define SP_ARCH_SCHEMA "schedpredict-arch/1"

static const char *const k_source_kinds[] = {"spec:", "measured:", "derived:", "estimate:"};

static const char *const k_l1pol_names[] = {"bypass", "write-through-no-allocate",
                                             "write-through-allocate"};
static const char *const k_l2pol_names[] = {"write-back-allocate", "write-back-no-allocate"};

const char *sp_l1_store_policy_name(sp_l1_store_policy p) {
  return (unsigned)p < 3 ? k_l1pol_names[p] : "?";
}
const char *sp_l2_store_policy_name(sp_l2_store_policy p) {
  return (unsigned)p < 2 ? k_l2pol_names[p] : "?";
}

static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= SP_ARCH_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             (i > 0 && (c == '_' || c == '-' || c == '.'));
    if (!ok) return 0;
  }
  return 1;
}

static int get_int(const json_t *v, const char *path, const char *key, long long lo, long long hi,
                   long long *out, char *err, size_t errlen) {
  if (!json_is_integer(v))
    return fail(err, errlen, path, key, "'value' must be an integer, got %s", json_type_name(v));
  long long x = (long long)json_integer_value(v);
  if (x < lo) {
    return fail(err, errlen, path, key, "'value' must be %s, got %lld",
                lo > 0 ? "positive" : "non-negative", x);
  }
  if (x > hi) return fail(err, errlen, path, key, "'value' %lld is too large (max %lld)", x, hi);
  *out = x;
  return 0;
}

static int parse_field(const fdesc *f, const json_t *fo, sp_arch *a, const char *path, char *err,
                       size_t errlen) {
  const char *key = f->key;
  if (!json_is_object(fo))
    return fail(err, errlen, path, key,
                "expected an object {\"value\": ..., \"source\": \"...\"}, got %s",
                json_type_name(fo));
  const char *mk;
  json_t *mv;
  json_object_foreach((json_t *)fo, mk, mv) {
    if (strcmp(mk, "value") && strcmp(mk, "source") && strcmp(mk, "note"))
      return fail(err, errlen, path, key, "unknown member '%s' (allowed: value, source, note)", mk);
    if (!strcmp(mk, "note") && !json_is_string(mv))
      return fail(err, errlen, path, key, "'note' must be a string, got %s", json_type_name(mv));
  }
  const json_t *src = json_object_get(fo, "source");
  if (!src) return fail(err, errlen, path, key, "missing 'source'");
  if (!json_is_string(src))
    return fail(err, errlen, path, key, "'source' must be a string, got %s", json_type_name(src));
  const char *s = json_string_value(src);
  int kind_ok = 0;
  for (size_t i = 0; i < sizeof k_source_kinds / sizeof k_source_kinds[0]; i++) {
    size_t n = strlen(k_source_kinds[i]);
    if (!strncmp(s, k_source_kinds[i], n)) {
      const char *rest = s + n;
      while (*rest == ' ') rest++;
      kind_ok = *rest != '\0' ? 1 : -1;
      break;
    }
  }
  if (kind_ok == 0)
    return fail(err, errlen, path, key,
                "'source' must begin with spec:, measured:, derived: or estimate:");
  if (kind_ok < 0) return fail(err, errlen, path, key, "'source' names no source");

  const json_t *v = json_object_get(fo, "value");
  if (!v) return fail(err, errlen, path, key, "missing 'value'");
  char *base = (char *)a + f->off;
  if (json_is_null(v)) {
    if (!(f->flags & F_NULLABLE))
      return fail(err, errlen, path, key, "'value' must not be null");
    if (f->type == FT_INT) *(int *)base = 0;
    else if (f->type == FT_DOUBLE) *(double *)base = 0.0;
    return 0;
  }
  long long lo = (f->flags & F_ZERO_OK) ? 0 : 1;
  long long x;
  switch (f->type) {
  case FT_INT:
    if (get_int(v, path, key, lo, INT_MAX, &x, err, errlen)) return -1;
    *(int *)base = (int)x;
    return 0;
  case FT_I64:
    if (get_int(v, path, key, lo, (long long)1 << 53, &x, err, errlen)) return -1;
    *(int64_t *)base = (int64_t)x;
    return 0;
  case FT_DOUBLE: {
    if (!json_is_number(v))
      return fail(err, errlen, path, key, "'value' must be a number, got %s", json_type_name(v));
    double d = json_number_value(v);
    if (!isfinite(d) || d <= 0.0)
      return fail(err, errlen, path, key, "'value' must be positive, got %g", d);
    *(double *)base = d;
    return 0;
  }
  case FT_BOOL:
    if (!json_is_boolean(v))
      return fail(err, errlen, path, key, "'value' must be true or false, got %s",
                  json_type_name(v));
    *(int *)base = json_is_true(v) ? 1 : 0;
    return 0;
  case FT_CC: {
    if (!json_is_string(v))
      return fail(err, errlen, path, key, "'value' must be a string \"MAJOR.MINOR\", got %s",
                  json_type_name(v));
    const char *cs = json_string_value(v);
    int maj = 0, min = 0, used = 0;
    if (sscanf(cs, "%d.%d%n", &maj, &min, &used) != 2 || (size_t)used != strlen(cs) || maj < 1 ||
        maj > 99 || min < 0 || min > 9)
      return fail(err, errlen, path, key, "'value' \"%s\" is not of the form \"MAJOR.MINOR\"", cs);
    a->cc_major = maj;
    a->cc_minor = min;
    return 0;
  }
  case FT_L1POL:
  case FT_L2POL: {
    const char *const *names = f->type == FT_L1POL ? k_l1pol_names : k_l2pol_names;
    int nn = f->type == FT_L1POL ? 3 : 2;
    if (!json_is_string(v))
      return fail(err, errlen, path, key, "'value' must be a string, got %s", json_type_name(v));
    const char *ps = json_string_value(v);
    for (int i = 0; i < nn; i++) {
      if (!strcmp(ps, names[i])) {
        *(int *)base = i;
        return 0;
      }
    }
    return f->type == FT_L1POL
               ? fail(err, errlen, path, key,
                      "'value' \"%s\" is not one of bypass, write-through-no-allocate, "
                      "write-through-allocate",
                      ps)
               : fail(err, errlen, path, key,
                      "'value' \"%s\" is not one of write-back-allocate, write-back-no-allocate",
                      ps);
  }
  case FT_CARVEOUTS: {
    if (!json_is_array(v))
      return fail(err, errlen, path, key, "'value' must be an array of byte counts, got %s",
                  json_type_name(v));
    size_t n = json_array_size(v);
    if (n == 0 || n > SP_ARCH_MAX_CARVEOUTS)
      return fail(err, errlen, path, key, "'value' must hold 1 to %d sizes, has %zu",
                  SP_ARCH_MAX_CARVEOUTS, n);
    for (size_t i = 0; i < n; i++) {
      const json_t *e = json_array_get(v, i);
      if (!json_is_integer(e) || json_integer_value(e) < 0 ||
          json_integer_value(e) > ((json_int_t)1 << 40))
        return fail(err, errlen, path, key, "element %zu must be a non-negative integer", i);
      a->shared_carveouts_bytes[i] = (int64_t)json_integer_value(e);
      if (i > 0 && a->shared_carveouts_bytes[i] <= a->shared_carveouts_bytes[i - 1])
        return fail(err, errlen, path, key, "sizes must be strictly ascending (element %zu)", i);
    }
    a->n_shared_carveouts = (int)n;
    return 0;
  }
  case FT_DEALING: {
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n > SP_ARCH_MAX_DEALING)
      return fail(err, errlen, path, key, "'value' must be an array of 1 to %d SM ids",
                  SP_ARCH_MAX_DEALING);
    for (size_t i = 0; i < n; i++) {
      const json_t *e = json_array_get(v, i);
      if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > INT16_MAX)
        return fail(err, errlen, path, key, "element %zu must be an SM id (0 to sm_count - 1)", i);
      a->block_dealing_cycle[i] = (int16_t)json_integer_value(e);
    }
    a->n_block_dealing_cycle = (int)n;
    return 0;
  }
  case FT_FP_OP: {
    /* {"latency_cycles": L, "sm_cycles_per_warp_instruction": C}, both positive */
    sp_arch_fp_op *op = (sp_arch_fp_op *)base;
    const json_t *l = json_is_object(v) ? json_object_get(v, "latency_cycles") : NULL;
    const json_t *c = json_is_object(v) ? json_object_get(v, "sm_cycles_per_warp_instruction") : NULL;
    if (!l || !c || json_object_size(v) != 2 || !json_is_number(l) || !json_is_number(c) ||
        !(json_number_value(l) > 0) || !(json_number_value(c) > 0) || !isfinite(json_number_value(l)) ||
        !isfinite(json_number_value(c)))
      return fail(err, errlen, path, key,
                  "'value' must be {\"latency_cycles\": L, \"sm_cycles_per_warp_instruction\": C} "
                  "with L and C positive numbers");
    op->latency_cycles = json_number_value(l);
    op->issue_cycles = json_number_value(c);
    return 0;
  }
  case FT_BW_CURVE:
  case FT_DRIFT_CURVE:
  case FT_WALK_CURVE: {
    /* bandwidths: [SMs, GB/s], GB/s > 0; drift: [rounds, slowdown], walk: [blocks, slowdown],
     * slowdown >= 1 */
    const int bw = f->type == FT_BW_CURVE;
    const char *xs = bw ? "SM counts" : f->type == FT_WALK_CURVE ? "blocks" : "rounds";
    const char *pair = bw ? "[SMs, GB/s]" : f->type == FT_WALK_CURVE ? "[blocks, slowdown]" : "[rounds, slowdown]";
    sp_arch_curve *c = (sp_arch_curve *)base;
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n > SP_ARCH_MAX_BW_POINTS)
      return fail(err, errlen, path, key, "'value' must be an array of 1 to %d %s pairs",
                  SP_ARCH_MAX_BW_POINTS, pair);
    for (size_t i = 0; i < n; i++) {
      const json_t *e = json_array_get(v, i), *k = json_array_get(e, 0), *g = json_array_get(e, 1);
      if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(k) || !json_is_number(g) ||
          json_integer_value(k) < 1 || (bw ? json_number_value(g) <= 0 : json_number_value(g) < 1))
        return fail(err, errlen, path, key, "element %zu must be %s: a positive integer and %s", i,
                    pair, bw ? "a positive number" : "a number of at least 1");
      c->x[i] = (double)json_integer_value(k);
      c->y[i] = json_number_value(g);
      if (i > 0 && c->x[i] <= c->x[i - 1])
        return fail(err, errlen, path, key, "%s must be strictly ascending (element %zu)", xs, i);
    }
    c->n = (int)n;
    return 0;
  }
  }
  return fail(err, errlen, path, key, "internal error: unknown field type");
}

static int is_pow2(long long x) { return x > 0 && (x & (x - 1)) == 0; }

int64_t sp_arch_l2_model_bytes(const sp_arch *arch) {
  return arch->l2_reuse_bytes > 0 ? arch->l2_reuse_bytes : arch->l2_bytes;
}

int sp_arch_models_fp(const sp_arch *arch) {
  for (int k = 0; k < SP_ARCH_FP_KINDS; k++)
    if (arch->fp_op[k].issue_cycles > 0) return 1;
  return 0;
}

double sp_arch_bw_at(const sp_arch_curve *c, double sms) {
  if (c->n < 1) return 0;
  if (sms <= c->x[0]) return c->y[0] * sms / c->x[0];
  for (int i = 1; i < c->n; i++)
    if (sms <= c->x[i])
      return c->y[i - 1] + (c->y[i] - c->y[i - 1]) * (sms - c->x[i - 1]) / (c->x[i] - c->x[i - 1]);
  return c->y[c->n - 1];
}

/* A curve must reach every SM of the chip: the time model reads it at up to sm_count. */
static int check_curve(const sp_arch *a, const sp_arch_curve *c, const char *key, const char *p, char *err,
                       size_t n) {
  if (c->n && c->x[c->n - 1] < a->sm_count)
    return fail(err, n, p, key, "the last point is at %g SMs; it must reach sm_count %d", c->x[c->n - 1],
                a->sm_count);
  return 0;
}

/* Every SM id of the dealing cycle is an SM, and every SM is in it (else the dealing would
 * never fill that SM's slots). */
static int check_dealing(const sp_arch *a, const char *p, char *err, size_t n) {
  if (!a->n_block_dealing_cycle) return 0;
  if (a->sm_count > SP_ARCH_MAX_DEALING)
    return fail(err, n, p, "block_dealing_cycle", "sm_count %d exceeds the cycle's maximum length %d",
                a->sm_count, SP_ARCH_MAX_DEALING);
  unsigned char seen[SP_ARCH_MAX_DEALING] = {0};
  for (int i = 0; i < a->n_block_dealing_cycle; i++) {
    int s = a->block_dealing_cycle[i];
    if (s >= a->sm_count)
      return fail(err, n, p, "block_dealing_cycle", "element %d: SM %d, but sm_count is %d", i, s,
                  a->sm_count);
    seen[s] = 1;
  }
  for (int s = 0; s < a->sm_count; s++)
    if (!seen[s])
      return fail(err, n, p, "block_dealing_cycle", "SM %d is never dealt a block (every SM must appear)", s);
  return 0;
}

/* Relations between fields. */
static int cross_check(const sp_arch *a, const char *p, char *err, size_t n) {
  if (a->warp_size != 32)
    return fail(err, n, p, "warp_size", "must be 32 (every NVIDIA GPU), got %d", a->warp_size);
  if ((long long)a->max_warps_per_sm * a->warp_size != a->max_threads_per_sm)
    return fail(err, n, p, "max_warps_per_sm", "%d warps x %d threads != max_threads_per_sm %d",
                a->max_warps_per_sm, a->warp_size, a->max_threads_per_sm);
  if (a->max_threads_per_block > a->max_threads_per_sm)
    return fail(err, n, p, "max_threads_per_block", "%d exceeds max_threads_per_sm %d",
                a->max_threads_per_block, a->max_threads_per_sm);
  if (a->max_threads_per_block % a->warp_size)
    return fail(err, n, p, "max_threads_per_block", "%d is not a multiple of the warp size",
                a->max_threads_per_block);
  if ((long long)a->max_registers_per_thread * a->warp_size > a->registers_per_sm)
    return fail(err, n, p, "max_registers_per_thread", "%d x 32 exceeds registers_per_sm %d",
                a->max_registers_per_thread, a->registers_per_sm);
  if (a->register_alloc_unit > a->registers_per_sm)
    return fail(err, n, p, "register_alloc_unit", "exceeds registers_per_sm");
  if (a->warp_alloc_granularity > a->max_warps_per_sm)
    return fail(err, n, p, "warp_alloc_granularity", "exceeds max_warps_per_sm");
  if (a->shared_per_sm_bytes > a->l1_shared_unified_bytes)
    return fail(err, n, p, "shared_per_sm_bytes", "%lld exceeds l1_shared_unified_bytes %lld",
                (long long)a->shared_per_sm_bytes, (long long)a->l1_shared_unified_bytes);
  if (a->shared_per_block_bytes > a->shared_per_sm_bytes)
    return fail(err, n, p, "shared_per_block_bytes", "%lld exceeds shared_per_sm_bytes %lld",
                (long long)a->shared_per_block_bytes, (long long)a->shared_per_sm_bytes);
  if (a->shared_carveouts_bytes[a->n_shared_carveouts - 1] != a->shared_per_sm_bytes)
    return fail(err, n, p, "shared_carveouts_bytes",
                "largest carveout %lld != shared_per_sm_bytes %lld",
                (long long)a->shared_carveouts_bytes[a->n_shared_carveouts - 1],
                (long long)a->shared_per_sm_bytes);
  if (a->l1_bytes > a->l1_shared_unified_bytes)
    return fail(err, n, p, "l1_bytes", "%lld exceeds l1_shared_unified_bytes %lld",
                (long long)a->l1_bytes, (long long)a->l1_shared_unified_bytes);
  if (!is_pow2(a->l1_line_bytes))
    return fail(err, n, p, "l1_line_bytes", "%d is not a power of two", a->l1_line_bytes);
  if (!is_pow2(a->l1_sector_bytes) || a->l1_line_bytes % a->l1_sector_bytes)
    return fail(err, n, p, "l1_sector_bytes", "%d does not divide l1_line_bytes %d",
                a->l1_sector_bytes, a->l1_line_bytes);
  if (a->l1_bytes % a->l1_line_bytes)
    return fail(err, n, p, "l1_bytes", "%lld is not a multiple of l1_line_bytes %d",
                (long long)a->l1_bytes, a->l1_line_bytes);
  if (a->l1_assoc && a->l1_bytes % ((int64_t)a->l1_line_bytes * a->l1_assoc))
    return fail(err, n, p, "l1_assoc", "l1_bytes is not a multiple of line x %d ways",
                a->l1_assoc);
  if (!is_pow2(a->l2_line_bytes))
    return fail(err, n, p, "l2_line_bytes", "%d is not a power of two", a->l2_line_bytes);
  if (!is_pow2(a->l2_sector_bytes) || a->l2_line_bytes % a->l2_sector_bytes)
    return fail(err, n, p, "l2_sector_bytes", "%d does not divide l2_line_bytes %d",
                a->l2_sector_bytes, a->l2_line_bytes);
  if (a->l2_line_bytes / a->l2_sector_bytes > 16)
    return fail(err, n, p, "l2_line_bytes", "%d holds %d sectors of %d bytes; the model keeps at most 16",
                a->l2_line_bytes, a->l2_line_bytes / a->l2_sector_bytes, a->l2_sector_bytes);
  if (a->l2_fill_bytes && (!is_pow2(a->l2_fill_bytes) || a->l2_fill_bytes < a->l2_sector_bytes ||
                           a->l2_line_bytes % a->l2_fill_bytes))
    return fail(err, n, p, "l2_fill_bytes",
                "%d must be a power of two from l2_sector_bytes %d to l2_line_bytes %d",
                a->l2_fill_bytes, a->l2_sector_bytes, a->l2_line_bytes);
  if (a->l2_bytes % ((int64_t)a->l2_line_bytes * a->l2_partitions))
    return fail(err, n, p, "l2_bytes", "%lld is not a multiple of l2_line_bytes x l2_partitions",
                (long long)a->l2_bytes);
  if (a->l2_assoc &&
      a->l2_bytes % ((int64_t)a->l2_line_bytes * a->l2_assoc * a->l2_partitions))
    return fail(err, n, p, "l2_assoc", "l2_bytes is not a multiple of line x %d ways x partitions",
                a->l2_assoc);
  if (a->l2_bytes <= a->l1_bytes)
    return fail(err, n, p, "l2_bytes", "not larger than l1_bytes");
  if (a->l2_reuse_bytes &&
      (a->l2_reuse_bytes <= a->l1_bytes || a->l2_reuse_bytes > a->l2_bytes ||
       a->l2_reuse_bytes % a->l2_sector_bytes))
    return fail(err, n, p, "l2_reuse_bytes",
                "%lld must be a multiple of l2_sector_bytes above l1_bytes and at most l2_bytes %lld",
                (long long)a->l2_reuse_bytes, (long long)a->l2_bytes);
  if (a->l2_reuse_set_sectors &&
      (!is_pow2(a->l2_reuse_set_sectors) ||
       a->l2_reuse_set_sectors * a->l2_sector_bytes < a->l2_line_bytes ||
       a->l2_reuse_set_sectors * a->l2_sector_bytes > sp_arch_l2_model_bytes(a)))
    return fail(err, n, p, "l2_reuse_set_sectors",
                "%lld must be a power of two, at least a line's sectors and at most the L2's",
                (long long)a->l2_reuse_set_sectors);
  if (a->l2_hit_latency_cycles <= a->l1_hit_latency_cycles)
    return fail(err, n, p, "l2_hit_latency_cycles", "%g is not above l1_hit_latency_cycles %g",
                a->l2_hit_latency_cycles, a->l1_hit_latency_cycles);
  if (a->dram_latency_cycles <= a->l2_hit_latency_cycles)
    return fail(err, n, p, "dram_latency_cycles", "%g is not above l2_hit_latency_cycles %g",
                a->dram_latency_cycles, a->l2_hit_latency_cycles);
  if (a->l2_far_hit_latency_cycles != 0.0) {
    if (a->l2_partitions < 2)
      return fail(err, n, p, "l2_far_hit_latency_cycles",
                  "given but l2_partitions is 1 (use null)");
    if (a->l2_far_hit_latency_cycles < a->l2_hit_latency_cycles)
      return fail(err, n, p, "l2_far_hit_latency_cycles", "%g is below l2_hit_latency_cycles %g",
                  a->l2_far_hit_latency_cycles, a->l2_hit_latency_cycles);
  }
  if (a->clock_base_mhz > a->clock_boost_mhz)
    return fail(err, n, p, "clock_base_mhz", "%g exceeds clock_boost_mhz %g", a->clock_base_mhz,
                a->clock_boost_mhz);
  if ((a->block_dispatch_ns > 0) != (a->empty_block_ns > 0))
    return fail(err, n, p, a->block_dispatch_ns > 0 ? "empty_block_ns" : "block_dispatch_ns",
                "missing: block_dispatch_ns and empty_block_ns are measured together (give both "
                "or neither)");
  if ((a->cas_global_base_ns > 0) != (a->cas_global_per_contender_ns > 0) ||
      (a->cas_global_base_ns > 0 && !(a->cas_shared_ns > 0)))
    return fail(err, n, p, a->cas_shared_ns > 0 ? "cas_global_base_ns" : "cas_shared_ns",
                "missing: cas_shared_ns, cas_global_base_ns and cas_global_per_contender_ns are "
                "fitted together (give all three or only cas_shared_ns)");
  if (check_curve(a, &a->l2_bw_by_sms, "l2_bw_by_sms_gbs", p, err, n) ||
      check_curve(a, &a->dram_bw_by_sms, "dram_bw_by_sms_gbs", p, err, n))
    return -1;
  return check_dealing(a, p, err, n);
}

static int parse_root(const json_t *root, const char *path, sp_arch *a, char *err, size_t n) {
  if (!json_is_object(root))
    return fail(err, n, path, NULL, "top level must be a JSON object, got %s",
                json_type_name(root));
  /* unknown keys first: a misspelt field is reported as such rather than as missing */
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)root, k, v) {
    int known = 0;
    for (size_t i = 0; i < sizeof k_plain_keys / sizeof k_plain_keys[0] && !known; i++)
      known = !strcmp(k, k_plain_keys[i]);
    for (size_t i = 0; i < N_FIELDS && !known; i++) known = !strcmp(k, k_fields[i].key);
    if (!known) return fail(err, n, path, k, "unknown field (see arch/README.md)");
  }
  const json_t *schema = json_object_get(root, "schema");
  if (!schema) return fail(err, n, path, "schema", "missing (expected \"%s\")", SP_ARCH_SCHEMA);
  if (!json_is_string(schema) || strcmp(json_string_value(schema), SP_ARCH_SCHEMA))
    return fail(err, n, path, "schema", "must be the string \"%s\"", SP_ARCH_SCHEMA);

  const json_t *nm = json_object_get(root, "name");
  if (!nm) return fail(err, n, path, "name", "missing");
  if (!json_is_string(nm))
    return fail(err, n, path, "name", "must be a string, got %s", json_type_name(nm));
  if (!valid_name(json_string_value(nm)))
    return fail(err, n, path, "name",
                "\"%s\" is not a valid name (1-%d characters of a-z, 0-9, '_', '-', '.', "
                "starting with a letter or digit)",
                json_string_value(nm), SP_ARCH_NAME_MAX - 1);
  snprintf(a->name, sizeof a->name, "%s", json_string_value(nm));

  const json_t *fn = json_object_get(root, "full_name");
  if (!fn) return fail(err, n, path, "full_name", "missing");
  if (!json_is_string(fn) || json_string_length(fn) == 0 ||
      json_string_length(fn) >= SP_ARCH_FULL_NAME_MAX)
    return fail(err, n, path, "full_name", "must be a non-empty string of fewer than %d bytes",
                SP_ARCH_FULL_NAME_MAX);
  snprintf(a->full_name, sizeof a->full_name, "%s", json_string_value(fn));

  const json_t *notes = json_object_get(root, "notes");
  if (notes && !json_is_string(notes)) {
    if (!json_is_array(notes)) return fail(err, n, path, "notes", "must be a string or an array of strings");
    for (size_t i = 0; i < json_array_size(notes); i++)
      if (!json_is_string(json_array_get(notes, i)))
        return fail(err, n, path, "notes", "element %zu is not a string", i);
  }

  for (size_t i = 0; i < N_FIELDS; i++) {
    const json_t *fo = json_object_get(root, k_fields[i].key);
    if (!fo && (k_fields[i].flags & F_OPTIONAL)) continue;
    if (!fo) return fail(err, n, path, k_fields[i].key, "missing");
    if (parse_field(&k_fields[i], fo, a, path, err, n)) return -1;
  }
  return cross_check(a, path, err, n);
}

int sp_arch_load_file(const char *path, sp_arch *out, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!path || !out) return fail(err, errlen, path ? path : "(null)", NULL, "no file given");
  memset(out, 0, sizeof *out);
  json_error_t je;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    if (je.line > 0)
      return fail(err, errlen, path, NULL, "line %d, column %d: invalid JSON: %s", je.line,
                  je.column, je.text);
    return fail(err, errlen, path, NULL, "%s", je.text);
  }
  int rc = parse_root(root, path, out, err, errlen);
  json_decref(root);
  if (rc == 0) snprintf(out->path, sizeof out->path, "%s", path);
  return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* search path */

typedef struct dirlist {
  char dirs[16][SP_ARCH_PATH_MAX];
  int n;
} dirlist;

static void dirlist_add(dirlist *d, const char *s, size_t len) {
  if (len == 0 || len >= SP_ARCH_PATH_MAX || d->n >= 16) return;
  memcpy(d->dirs[d->n], s, len);
  d->dirs[d->n][len] = '\0';
  d->n++;
}

static void search_dirs(dirlist *d) {
  d->n = 0;
  const char *env = getenv("SCHEDPREDICT_ARCH_PATH");
  if (env) {
    const char *s = env;
    for (;;) {
      const char *c = strchr(s, ':');
      size_t len = c ? (size_t)(c - s) : strlen(s);
      dirlist_add(d, s, len);
      if (!c) break;
      s = c + 1;
    }
  }
#ifdef SP_SOURCE_DIR
  {
    char buf[SP_ARCH_PATH_MAX];
    int k = snprintf(buf, sizeof buf, "%s/arch", SP_SOURCE_DIR);
    if (k > 0 && (size_t)k < sizeof buf) dirlist_add(d, buf, (size_t)k);
  }
#endif
  dirlist_add(d, SP_ARCH_INSTALL_DIR, strlen(SP_ARCH_INSTALL_DIR));
}

static int file_exists(const char *p) {
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  fclose(f);
  return 1;
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static int load_named_file(const char *file, const char *name, sp_arch *out, char *err,
                           size_t errlen) {
  if (sp_arch_load_file(file, out, err, errlen)) return -1;
  if (strcmp(out->name, name))
    return fail(err, errlen, file, "name", "\"%s\" does not match the file name %s.json",
                out->name, name);
  return 0;
}

int sp_arch_load(const char *name_or_path, sp_arch *out, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!name_or_path || !*name_or_path || !out)
    return fail(err, errlen, "arch", NULL, "no architecture name given");
  if (strchr(name_or_path, '/') || ends_with(name_or_path, ".json"))
    return sp_arch_load_file(name_or_path, out, err, errlen);
  if (!valid_name(name_or_path))
    return fail(err, errlen, "arch", NULL,
                "'%s' is neither a file path nor a valid architecture name", name_or_path);
  dirlist d;
  search_dirs(&d);
  char file[SP_ARCH_PATH_MAX + SP_ARCH_NAME_MAX + 8];
  for (int i = 0; i < d.n; i++) {
    snprintf(file, sizeof file, "%s/%s.json", d.dirs[i], name_or_path);
    if (file_exists(file)) return load_named_file(file, name_or_path, out, err, errlen);
  }
  char searched[2048] = "";
  size_t used = 0;
  for (int i = 0; i < d.n && used < sizeof searched; i++) {
    int k = snprintf(searched + used, sizeof searched - used, "%s%s", i ? ", " : "", d.dirs[i]);
    if (k < 0) break;
    used += (size_t)k;
  }
  return fail(err, errlen, "arch", NULL,
              "no description '%s' (looked for %s.json in: %s; set SCHEDPREDICT_ARCH_PATH or "
              "give a file path; --list-archs shows the known names)",
              name_or_path, name_or_path, searched);
}

static int entry_cmp(const void *a, const void *b) {
  return strcmp(((const sp_arch_entry *)a)->name, ((const sp_arch_entry *)b)->name);
}

int sp_arch_list(sp_arch_entry **entries, int *n, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!entries || !n) return fail(err, errlen, "arch", NULL, "no output given");
  *entries = NULL;
  *n = 0;
  sp_arch_entry *v = NULL;
  int cnt = 0, cap = 0;
  dirlist d;
  search_dirs(&d);
  for (int i = 0; i < d.n; i++) {
    DIR *dir = opendir(d.dirs[i]);
    if (!dir) continue;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
      const char *fname = de->d_name;
      size_t len = strlen(fname);
      if (len <= 5 || !ends_with(fname, ".json") || len - 5 >= SP_ARCH_NAME_MAX) continue;
      char name[SP_ARCH_NAME_MAX];
      memcpy(name, fname, len - 5);
      name[len - 5] = '\0';
      if (!valid_name(name)) continue;
      int dup = 0;
      for (int j = 0; j < cnt && !dup; j++) dup = !strcmp(v[j].name, name);
      if (dup) continue;
      if (cnt == cap) {
        int ncap = cap ? cap * 2 : 8;
        sp_arch_entry *nv = realloc(v, (size_t)ncap * sizeof *nv);
        if (!nv) {
          closedir(dir);
          free(v);
          return fail(err, errlen, "arch", NULL, "out of memory listing descriptions");
        }
        v = nv;
        cap = ncap;
      }
      sp_arch_entry *e = &v[cnt++];
      memset(e, 0, sizeof *e);
      snprintf(e->name, sizeof e->name, "%s", name);
      size_t dl = strlen(d.dirs[i]);
      if (dl + 1 + len >= sizeof e->path) {
        cnt--;
        continue;
      }
      memcpy(e->path, d.dirs[i], dl);
      e->path[dl] = '/';
      memcpy(e->path + dl + 1, fname, len + 1);
      sp_arch *a = malloc(sizeof *a);
      if (!a) {
        closedir(dir);
        free(v);
        return fail(err, errlen, "arch", NULL, "out of memory listing descriptions");
      }
      if (load_named_file(e->path, name, a, e->error, sizeof e->error) == 0) {
        e->ok = 1;
        snprintf(e->full_name, sizeof e->full_name, "%s", a->full_name);
      }
      free(a);
    }
    closedir(dir);
  }
  if (cnt > 1) qsort(v, (size_t)cnt, sizeof *v, entry_cmp);
  *entries = cnt ? v : NULL;
  if (!cnt) free(v);
  *n = cnt;
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Eq. 7.1-7.2 */

static int64_t round_up(int64_t x, int64_t unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }

int sp_arch_occupancy(const sp_arch *a, int tpb, int regs, int64_t smem, sp_occupancy *o) {
  sp_occupancy z;
  memset(&z, 0, sizeof z);
  z.by_threads = z.by_blocks = z.by_warps = z.by_registers = z.by_shared = INT32_MAX;
  z.limit = SP_OCC_LIMIT_NONE;
  if (o) *o = z;
  if (!a || !o || tpb <= 0 || tpb > a->max_threads_per_block || regs < 0 || smem < 0) return 0;
  if (regs > a->max_registers_per_thread || smem > a->shared_per_block_bytes) return 0;
  int wpb = (tpb + a->warp_size - 1) / a->warp_size;
  z.warps_per_block = wpb;
  z.by_threads = a->max_threads_per_sm / tpb; /* Eq. 7.2, first term */
  z.by_blocks = a->max_blocks_per_sm;         /* Eq. 7.2, second term */
  z.by_warps = a->max_warps_per_sm / wpb;     /* whole warps are allocated */
  if (regs > 0) {
    int64_t per_warp = round_up((int64_t)regs * a->warp_size, a->register_alloc_unit);
    int64_t warps = a->registers_per_sm / per_warp;
    warps -= warps % a->warp_alloc_granularity;
    z.by_registers = (int)(warps / wpb);
  }
  if (smem > 0) {
    int64_t per_block = round_up(smem + a->shared_reserved_per_block_bytes,
                                 a->shared_alloc_unit_bytes);
    int64_t b = a->shared_per_sm_bytes / per_block;
    z.by_shared = b > INT32_MAX ? INT32_MAX : (int)b;
  }
  const int lim[5] = {z.by_threads, z.by_blocks, z.by_warps, z.by_registers, z.by_shared};
  const sp_occ_limit which[5] = {SP_OCC_LIMIT_THREADS, SP_OCC_LIMIT_BLOCKS, SP_OCC_LIMIT_WARPS,
                                 SP_OCC_LIMIT_REGISTERS, SP_OCC_LIMIT_SHARED};
  int best = 0;
  for (int i = 1; i < 5; i++)
    if (lim[i] < lim[best]) best = i;
  z.blocks = lim[best];
  z.limit = which[best];
  z.active_warps = z.blocks * wpb;
  z.occupancy = (double)z.active_warps / a->max_warps_per_sm;
  *o = z;
  return z.blocks;
}

int sp_arch_active_blocks_per_sm(const sp_arch *a, int tpb, int regs, int64_t smem) {
  sp_occupancy o;
  return sp_arch_occupancy(a, tpb, regs, smem, &o);
}

int sp_arch_waves(const sp_arch *a, int64_t nblocks, int active, sp_waves *out) {
  if (!out) return -1;
  memset(out, 0, sizeof *out);
  if (!a || nblocks < 0 || active <= 0 || a->sm_count <= 0) return -1;
  int64_t per = (int64_t)active * a->sm_count;
  out->blocks_per_wave = per;
  out->full_waves = nblocks / per;
  out->tail_blocks = nblocks % per;
  out->waves = out->full_waves + (out->tail_blocks > 0);
  out->tail_fraction = (double)out->tail_blocks / (double)per;
  return 0;
}

int64_t sp_arch_l1_bytes_for_shared(const sp_arch *a, int64_t smem_per_sm) {
  if (!a || smem_per_sm < 0) return 0;
  for (int i = 0; i < a->n_shared_carveouts; i++) {
    int64_t c = a->shared_carveouts_bytes[i];
    if (c >= smem_per_sm) {
      int64_t rest = a->l1_shared_unified_bytes - c;
      return rest < a->l1_bytes ? rest : a->l1_bytes;
    }
  }
  return 0;
}
