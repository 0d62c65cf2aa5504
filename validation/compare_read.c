/* Reading plan.json and measured.json (validation/FORMATS.md) for `schedpredict compare`.
 * Every problem is reported as "FILE: JSON.PATH: what is wrong (what to do)". */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/compare.h"

const sp_cmp_field_info sp_cmp_fields[SP_CMP_NFIELDS] = {
    [SP_CMP_LD_REQUESTS] = {"global_load_requests", "global_load_requests",
                            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", false},
    [SP_CMP_LD_SECTORS] = {"gld_transactions", "gld_transactions",
                           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", false},
    [SP_CMP_L1_HIT_SECTORS] = {"ld_l1_hit_sectors", NULL,
                               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", false},
    [SP_CMP_L1_HIT_PCT] = {"global_hit_rate", "global_hit_rate",
                           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum / "
                           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", true},
    /* The model sends every L1 miss to the L2 and counts it as an L2 read. On the H100 the L2
     * request coalescer merges misses of several SMs for one sector before the L2 counts them
     * (validation/results/h100/2026-11-24-l2-merge-probe/), so the model's L2 reads are the
     * L1's misses, which this compares, as well as the L2's count below. */
    [SP_CMP_L1_MISS_SECTORS] = {"ld_l1_miss_sectors", NULL,
                                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", false},
    [SP_CMP_L2_SECTORS] = {"l2_tex_read_transactions", "l2_tex_read_transactions",
                           "lts__t_sectors_srcunit_tex_op_read.sum", false},
    [SP_CMP_L2_HIT_SECTORS] = {"l2_read_hit_sectors", NULL,
                               "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", false},
    [SP_CMP_L2_HIT_PCT] = {"l2_tex_read_hit_rate", "l2_tex_read_hit_rate",
                           "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum / "
                           "lts__t_sectors_srcunit_tex_op_read.sum", true},
    [SP_CMP_DRAM_BYTES] = {"dram_read_bytes", NULL, "dram__bytes_read.sum", false},
    [SP_CMP_DRAM_SECTORS] = {"dram_read_transactions", "dram_read_transactions",
                             "dram__bytes_read.sum / 32", false},
    [SP_CMP_DRAM_WRITE_BYTES] = {"dram_write_bytes", "dram_write_bytes", "dram__bytes_write.sum",
                                 false},
    [SP_CMP_TIME_US] = {"time_us", NULL, "time_us.median (CUDA events)", false},
};

#define SP_L1_RAW_METRIC "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"
#define SP_L2_RAW_METRIC "lts__t_sector_op_read_hit_rate.pct"
#define SP_OCC_METRIC "sm__warps_active.avg.pct_of_peak_sustained_active"
#define SP_DURATION_METRIC "gpu__time_duration.sum"

/* The reader's state: the file being read and where its error goes. */
typedef struct sp_rd {
  const char *file;
  char *err;
  size_t n;
  bool failed;
} sp_rd;

#define SP_PATH 384

__attribute__((format(printf, 3, 4))) static void sp_rd_fail(sp_rd *r, const char *path,
                                                             const char *fmt, ...) {
  if (r->failed) return;
  r->failed = true;
  int k = snprintf(r->err, r->n, "%s: %s: ", r->file, *path ? path : "(top level)");
  if (k < 0 || (size_t)k >= r->n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err + k, r->n - (size_t)k, fmt, ap);
  va_end(ap);
}

static const char *const sp_kind_names[] = {
    [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",     [JSON_STRING] = "a string",
    [JSON_INTEGER] = "an integer", [JSON_REAL] = "a real number", [JSON_TRUE] = "a boolean",
    [JSON_FALSE] = "a boolean",  [JSON_NULL] = "null"};

static const char *sp_json_kind(const json_t *v) { return sp_kind_names[json_typeof(v)]; }

/* path.key and path[i]; an overlong path ends in "..." */
static void sp_child(char *out, const char *path, const char *key) {
  if (snprintf(out, SP_PATH, "%s%s%s", path, *path ? "." : "", key) >= SP_PATH)
    strcpy(out + SP_PATH - 4, "...");
}

static void sp_index(char *out, const char *path, size_t i) {
  if (snprintf(out, SP_PATH, "%s[%zu]", path, i) >= SP_PATH) strcpy(out + SP_PATH - 4, "...");
}

/* obj.key of the given JSON type (JSON_REAL stands for any number); NULL when absent (an error
 * when required) or of another type (always an error). */
static json_t *sp_get(sp_rd *r, json_t *obj, const char *path, const char *key, json_type type,
                      bool required) {
  if (r->failed) return NULL;
  char p[SP_PATH];
  sp_child(p, path, key);
  json_t *v = json_object_get(obj, key);
  if (!v || (json_is_null(v) && !required)) {
    if (required) sp_rd_fail(r, p, "missing (required by validation/FORMATS.md)");
    return NULL;
  }
  bool fits = type == JSON_REAL ? json_is_number(v)
              : type == JSON_TRUE ? json_is_boolean(v)
                                  : json_typeof(v) == type;
  if (!fits) {
    sp_rd_fail(r, p, "expected %s, found %s", type == JSON_REAL ? "a number" : sp_kind_names[type],
               sp_json_kind(v));
    return NULL;
  }
  return v;
}

static const char *sp_get_str(sp_rd *r, json_t *obj, const char *path, const char *key,
                              bool required) {
  json_t *v = sp_get(r, obj, path, key, JSON_STRING, required);
  return v ? json_string_value(v) : NULL;
}

/* A number >= lo (and <= hi); NaN when absent and optional. */
static double sp_get_num(sp_rd *r, json_t *obj, const char *path, const char *key, bool required,
                         double lo, double hi) {
  json_t *v = sp_get(r, obj, path, key, JSON_REAL, required);
  if (!v) return NAN;
  double x = json_number_value(v);
  if (!(x >= lo && x <= hi)) {
    char p[SP_PATH];
    sp_child(p, path, key);
    sp_rd_fail(r, p, "%g is out of range [%g, %g]", x, lo, hi);
    return NAN;
  }
  return x;
}

static int64_t sp_get_int(sp_rd *r, json_t *obj, const char *path, const char *key,
                          bool required, int64_t lo, int64_t hi, int64_t dflt) {
  json_t *v = sp_get(r, obj, path, key, JSON_INTEGER, required);
  if (!v) return dflt;
  int64_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    char p[SP_PATH];
    sp_child(p, path, key);
    sp_rd_fail(r, p, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo,
               (long long)hi);
    return dflt;
  }
  return x;
}

static void sp_get_dims(sp_rd *r, json_t *obj, const char *path, const char *key, int64_t d[3]) {
  d[0] = d[1] = d[2] = 0;
  json_t *a = sp_get(r, obj, path, key, JSON_ARRAY, false);
  if (!a) return;
  char p[SP_PATH];
  sp_child(p, path, key);
  if (json_array_size(a) != 3) {
    sp_rd_fail(r, p, "expected 3 sizes [x, y, z], found %zu", json_array_size(a));
    return;
  }
  for (size_t i = 0; i < 3; i++) {
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
      char q[SP_PATH];
      sp_index(q, p, i);
      sp_rd_fail(r, q, "expected a positive integer, found %s", sp_json_kind(v));
      return;
    }
    d[i] = json_integer_value(v);
  }
}

/* schema and schema_version of a file's top level. */
static void sp_check_schema(sp_rd *r, json_t *root, const char *schema) {
  if (!json_is_object(root)) {
    sp_rd_fail(r, "", "expected a JSON object, found %s", sp_json_kind(root));
    return;
  }
  const char *s = sp_get_str(r, root, "", "schema", true);
  if (s && strcmp(s, schema) != 0) {
    sp_rd_fail(r, "schema", "is '%s', expected '%s' (is this the right file?)", s, schema);
    return;
  }
  int64_t v = sp_get_int(r, root, "", "schema_version", true, 1, INT64_MAX, 1);
  if (!r->failed && v > 1)
    sp_rd_fail(r, "schema_version",
               "%lld is newer than this schedpredict reads (1): update schedpredict",
               (long long)v);
}

static json_t *sp_load_file(const char *path, char *err, size_t n) {
  json_error_t je;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
  if (root) return root;
  if (je.line <= 0) {
    FILE *f = fopen(path, "rb");
    if (!f) snprintf(err, n, "%s: cannot read: %s", path, strerror(errno));
    else snprintf(err, n, "%s: not valid JSON: %s", path, je.text);
    if (f) fclose(f);
  } else {
    snprintf(err, n, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
  }
  return NULL;
}

static void sp_cand_init(sp_cmp_candidate *c) {
  memset(c, 0, sizeof *c);
  for (int f = 0; f < SP_CMP_NFIELDS; f++) c->model[f] = c->meas[f] = NAN;
  c->l1_hit_raw_pct = c->l2_hit_raw_pct = c->occupancy_pct = NAN;
  c->time_min_us = c->time_max_us = c->max_rel_diff = c->duration_us = NAN;
  c->cost_xu = NAN;
  c->registers = -1;
}

static double sp_pct_of(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : NAN;
}

static void sp_read_predicted(sp_rd *r, json_t *cj, const char *path, sp_cmp_candidate *c) {
  json_t *p = sp_get(r, cj, path, "predicted", JSON_OBJECT, true);
  if (!p) return;
  char pp[SP_PATH];
  sp_child(pp, path, "predicted");
  static const sp_cmp_field counts[] = {SP_CMP_LD_REQUESTS, SP_CMP_LD_SECTORS,
                                        SP_CMP_L1_HIT_SECTORS, SP_CMP_L2_SECTORS,
                                        SP_CMP_L2_HIT_SECTORS, SP_CMP_DRAM_BYTES};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
    c->model[counts[i]] = sp_get_num(r, p, pp, sp_cmp_fields[counts[i]].key, true, 0, INFINITY);
  c->model[SP_CMP_DRAM_WRITE_BYTES] =
      sp_get_num(r, p, pp, sp_cmp_fields[SP_CMP_DRAM_WRITE_BYTES].key, false, 0, INFINITY);
  c->model[SP_CMP_TIME_US] = sp_get_num(r, p, pp, "time_us", true, 0, INFINITY);
  c->cost_xu = sp_get_num(r, p, pp, "cost_xu", true, 0, INFINITY);
  json_t *s = sp_get(r, p, pp, "sampled", JSON_TRUE, false);
  c->sampled = s && json_is_true(s);
  c->model[SP_CMP_L1_HIT_PCT] = sp_pct_of(c->model[SP_CMP_L1_HIT_SECTORS], c->model[SP_CMP_LD_SECTORS]);
  c->model[SP_CMP_L2_HIT_PCT] = sp_pct_of(c->model[SP_CMP_L2_HIT_SECTORS], c->model[SP_CMP_L2_SECTORS]);
  c->model[SP_CMP_L1_MISS_SECTORS] = c->model[SP_CMP_L2_SECTORS];
  c->model[SP_CMP_DRAM_SECTORS] = c->model[SP_CMP_DRAM_BYTES] / 32.0;
}

static void sp_read_plan_candidate(sp_rd *r, json_t *cj, const char *path, sp_cmp_candidate *c) {
  sp_cand_init(c);
  if (!json_is_object(cj)) {
    sp_rd_fail(r, path, "expected a candidate object, found %s", sp_json_kind(cj));
    return;
  }
  c->id = sp_get_int(r, cj, path, "id", true, 0, INT64_MAX, -1);
  c->model_rank = (int)sp_get_int(r, cj, path, "model_rank", true, 1, INT_MAX, 0);
  c->pattern = sp_get_str(r, cj, path, "pattern", false);
  c->cuda_mapping = sp_get_str(r, cj, path, "cuda_mapping", false);
  c->openacc = sp_get_str(r, cj, path, "openacc", false);
  json_t *d = sp_get(r, cj, path, "compiler_default", JSON_TRUE, false);
  c->compiler_default = d && json_is_true(d);
  sp_get_dims(r, cj, path, "block", c->block);
  sp_get_dims(r, cj, path, "grid", c->grid);
  sp_read_predicted(r, cj, path, c);
}

static void sp_read_plan_kernel(sp_rd *r, json_t *kj, const char *path, sp_cmp_kernel *k) {
  memset(k, 0, sizeof *k);
  k->paper_row = -1;
  if (!json_is_object(kj)) {
    sp_rd_fail(r, path, "expected a kernel object, found %s", sp_json_kind(kj));
    return;
  }
  k->id = sp_get_str(r, kj, path, "id", true);
  k->file = sp_get_str(r, kj, path, "file", false);
  k->function = sp_get_str(r, kj, path, "function", false);
  k->line = sp_get_int(r, kj, path, "line", false, 0, INT64_MAX, 0);
  k->selection = sp_get_str(r, kj, path, "selection", false);
  k->space_size = sp_get_int(r, kj, path, "space_size", false, 0, INT64_MAX, -1);
  k->reference = sp_get_int(r, kj, path, "reference", false, 0, INT64_MAX, -1);
  if (!json_is_null(json_object_get(kj, "registers_per_thread")))
    k->model_registers = sp_get_int(r, kj, path, "registers_per_thread", false, 1, 255, 0);
  json_t *cands = sp_get(r, kj, path, "candidates", JSON_ARRAY, true);
  if (!cands) return;
  char cp[SP_PATH];
  sp_child(cp, path, "candidates");
  size_t n = json_array_size(cands);
  k->cand = calloc(n ? n : 1, sizeof *k->cand);
  if (!k->cand) {
    sp_rd_fail(r, cp, "out of memory");
    return;
  }
  for (size_t i = 0; i < n && !r->failed; i++) {
    char p[SP_PATH];
    sp_index(p, cp, i);
    sp_read_plan_candidate(r, json_array_get(cands, i), p, &k->cand[i]);
    k->ncand = (int)i + 1;
    for (size_t j = 0; j < i && !r->failed; j++)
      if (k->cand[j].id == k->cand[i].id)
        sp_rd_fail(r, p, "candidate id %lld appears twice in this kernel (also at [%zu])",
                   (long long)k->cand[i].id, j);
  }
}

int sp_cmp_load_plan_json(sp_cmp_data *c, json_t *root, const char *path, char *err, size_t n) {
  memset(c, 0, sizeof *c);
  c->plan_path = path;
  c->plan_root = json_incref(root);
  sp_rd r = {path, err, n, false};
  sp_check_schema(&r, root, "schedpredict-plan");
  json_t *gen = sp_get(&r, root, "", "generator", JSON_OBJECT, false);
  if (gen) {
    c->generator_version = sp_get_str(&r, gen, "generator", "version", false);
    c->generator_date = sp_get_str(&r, gen, "generator", "date", false);
  }
  c->model_arch = sp_get_str(&r, root, "", "model_arch", false);
  char arch_err[256];
  c->arch_known = c->model_arch && sp_arch_load(c->model_arch, &c->arch, arch_err, sizeof arch_err) == 0;
  c->skipped = sp_get(&r, root, "", "skipped", JSON_ARRAY, false);
  for (size_t i = 0; c->skipped && i < json_array_size(c->skipped) && !r.failed; i++) {
    char p[SP_PATH];
    sp_index(p, "skipped", i);
    json_t *sj = json_array_get(c->skipped, i);
    if (!json_is_object(sj)) sp_rd_fail(&r, p, "expected an object, found %s", sp_json_kind(sj));
    sp_get_str(&r, sj, p, "id", true);
    sp_get_str(&r, sj, p, "reason", false);
  }
  json_t *ks = sp_get(&r, root, "", "kernels", JSON_ARRAY, true);
  size_t nk = ks ? json_array_size(ks) : 0;
  if (ks) {
    c->kernels = calloc(nk ? nk : 1, sizeof *c->kernels);
    if (!c->kernels) sp_rd_fail(&r, "kernels", "out of memory");
  }
  for (size_t i = 0; i < nk && !r.failed; i++) {
    char p[SP_PATH];
    sp_index(p, "kernels", i);
    sp_read_plan_kernel(&r, json_array_get(ks, i), p, &c->kernels[i]);
    c->nkernels = (int)i + 1;
    for (size_t j = 0; j < i && !r.failed; j++)
      if (strcmp(c->kernels[j].id, c->kernels[i].id) == 0)
        sp_rd_fail(&r, p, "kernel id '%s' appears twice in the plan (also at kernels[%zu])",
                   c->kernels[i].id, j);
  }
  return r.failed ? -1 : 0;
}

typedef int (*sp_json_reader)(sp_cmp_data *c, json_t *root, const char *path, char *err, size_t n);

/* Parses the file at path and hands it to read. */
static int sp_read_file(sp_cmp_data *c, const char *path, sp_json_reader read, char *err, size_t n) {
  json_t *root = sp_load_file(path, err, n);
  if (!root) return -1;
  int rc = read(c, root, path, err, n);
  json_decref(root);
  return rc;
}

int sp_cmp_load_plan(sp_cmp_data *c, const char *path, char *err, size_t n) {
  memset(c, 0, sizeof *c);
  return sp_read_file(c, path, sp_cmp_load_plan_json, err, n);
}

const char *const sp_cmp_statuses[SP_CMP_NSTATUS] = {
    "ok", "compile_error", "launch_error", "fault", "timeout", "wrong_result", "too_large", "skipped"};

static bool sp_known_status(const char *s) {
  for (int i = 0; i < SP_CMP_NSTATUS; i++)
    if (strcmp(s, sp_cmp_statuses[i]) == 0) return true;
  return false;
}

static void sp_read_metrics(sp_rd *r, json_t *cj, const char *path, sp_cmp_candidate *c) {
  json_t *m = sp_get(r, cj, path, "metrics", JSON_OBJECT, false);
  if (!m) return;
  char mp[SP_PATH];
  sp_child(mp, path, "metrics");
  static const sp_cmp_field counts[] = {SP_CMP_LD_REQUESTS, SP_CMP_LD_SECTORS,
                                        SP_CMP_L1_HIT_SECTORS, SP_CMP_L2_SECTORS,
                                        SP_CMP_L2_HIT_SECTORS, SP_CMP_DRAM_BYTES,
                                        SP_CMP_DRAM_WRITE_BYTES, SP_CMP_L1_MISS_SECTORS};
  /* Metric names contain dots: give the path with the name quoted. */
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
    const char *name = sp_cmp_fields[counts[i]].nsight;
    c->meas[counts[i]] = sp_get_num(r, m, mp, name, false, 0, INFINITY);
  }
  c->l1_hit_raw_pct = sp_get_num(r, m, mp, SP_L1_RAW_METRIC, false, 0, 100);
  c->l2_hit_raw_pct = sp_get_num(r, m, mp, SP_L2_RAW_METRIC, false, 0, INFINITY); /* > 100 seen on the H100 */
  c->occupancy_pct = sp_get_num(r, m, mp, SP_OCC_METRIC, false, 0, 100);
  double ns = sp_get_num(r, m, mp, SP_DURATION_METRIC, false, 0, INFINITY);
  c->duration_us = ns / 1000.0;
  if (isnan(c->meas[SP_CMP_TIME_US])) c->meas[SP_CMP_TIME_US] = c->duration_us;
  c->meas[SP_CMP_L1_HIT_PCT] = sp_pct_of(c->meas[SP_CMP_L1_HIT_SECTORS], c->meas[SP_CMP_LD_SECTORS]);
  if (isnan(c->meas[SP_CMP_L1_HIT_PCT])) c->meas[SP_CMP_L1_HIT_PCT] = c->l1_hit_raw_pct;
  c->meas[SP_CMP_L2_HIT_PCT] = sp_pct_of(c->meas[SP_CMP_L2_HIT_SECTORS], c->meas[SP_CMP_L2_SECTORS]);
  c->meas[SP_CMP_DRAM_SECTORS] = c->meas[SP_CMP_DRAM_BYTES] / 32.0;
  /* Measurements before 2026-11-24 have no lookup_miss counter: lookups less hits, which come
   * from different replay passes (below), so a few sectors apart. */
  c->l1_miss_derived = isnan(c->meas[SP_CMP_L1_MISS_SECTORS]) &&
                       !isnan(c->meas[SP_CMP_LD_SECTORS]) && !isnan(c->meas[SP_CMP_L1_HIT_SECTORS]);
  if (c->l1_miss_derived)
    c->meas[SP_CMP_L1_MISS_SECTORS] =
        fmax(0, c->meas[SP_CMP_LD_SECTORS] - c->meas[SP_CMP_L1_HIT_SECTORS]);
  /* The hit and lookup counters come from different replay passes of the kernel, and they differ
   * by a fraction of a percent between passes (seen on the H100: hits 0.1-4 % above lookups on
   * kernels with heavy L2 reuse); a derived rate is capped at 100 %, the raw counters are kept. */
  if (c->meas[SP_CMP_L1_HIT_PCT] > 100) c->meas[SP_CMP_L1_HIT_PCT] = 100;
  if (c->meas[SP_CMP_L2_HIT_PCT] > 100) c->meas[SP_CMP_L2_HIT_PCT] = 100;
}

static void sp_read_measured_candidate(sp_rd *r, json_t *cj, const char *path,
                                       sp_cmp_kernel *k) {
  if (!json_is_object(cj)) {
    sp_rd_fail(r, path, "expected a candidate object, found %s", sp_json_kind(cj));
    return;
  }
  int64_t id = sp_get_int(r, cj, path, "id", true, 0, INT64_MAX, -1);
  if (r->failed) return;
  sp_cmp_candidate *c = NULL;
  for (int i = 0; i < k->ncand && !c; i++)
    if (k->cand[i].id == id) c = &k->cand[i];
  if (!c) {
    sp_rd_fail(r, path, "candidate %lld of kernel '%s' is not in the plan (measured from "
               "another plan?)", (long long)id, k->id);
    return;
  }
  if (c->measured_file) {
    sp_rd_fail(r, path, "candidate %lld of kernel '%s' is measured twice: here and in %s "
               "(shards must not overlap)", (long long)id, k->id, c->measured_file);
    return;
  }
  const char *status = sp_get_str(r, cj, path, "status", true);
  if (status && !sp_known_status(status)) {
    char p[SP_PATH];
    sp_child(p, path, "status");
    sp_rd_fail(r, p, "unknown status '%s' (validation/FORMATS.md lists them)", status);
  }
  const char *message = sp_get_str(r, cj, path, "message", false);
  int64_t regs = sp_get_int(r, cj, path, "registers", false, 0, INT64_MAX, -1);
  double t = NAN, tmin = NAN, tmax = NAN;
  json_t *tj = sp_get(r, cj, path, "time_us", JSON_OBJECT, false);
  if (tj) {
    char tp[SP_PATH];
    sp_child(tp, path, "time_us");
    t = sp_get_num(r, tj, tp, "median", false, 0, INFINITY);
    tmin = sp_get_num(r, tj, tp, "min", false, 0, INFINITY);
    tmax = sp_get_num(r, tj, tp, "max", false, 0, INFINITY);
  }
  const char *equal = NULL;
  double rel = NAN;
  json_t *res = sp_get(r, cj, path, "result", JSON_OBJECT, false);
  if (res) {
    char rp[SP_PATH];
    sp_child(rp, path, "result");
    equal = sp_get_str(r, res, rp, "equal", false);
    /* JSON has no infinity: schedvalidate writes the string "inf" */
    json_t *mr = json_object_get(res, "max_rel_diff");
    if (json_is_string(mr) && strcmp(json_string_value(mr), "inf") == 0) rel = INFINITY;
    else rel = sp_get_num(r, res, rp, "max_rel_diff", false, 0, INFINITY);
  }
  if (r->failed) return;
  c->meas[SP_CMP_TIME_US] = t;
  sp_read_metrics(r, cj, path, c);
  if (r->failed) return;
  c->measured_file = r->file;
  c->status = status;
  c->message = message;
  c->registers = regs;
  c->time_min_us = tmin;
  c->time_max_us = tmax;
  c->result_equal = equal;
  c->max_rel_diff = rel;
  c->wrong_result = strcmp(status, "wrong_result") == 0 || (equal && strcmp(equal, "differs") == 0);
  c->ok = strcmp(status, "ok") == 0 && !c->wrong_result;
  if (c->ok && !(c->meas[SP_CMP_TIME_US] > 0))
    sp_rd_fail(r, path, "status is ok but there is no positive time_us.median (nor %s)",
               SP_DURATION_METRIC);
}

int sp_cmp_add_measured_json(sp_cmp_data *c, json_t *root, const char *path, char *err, size_t n) {
  sp_cmp_measured_file *grown = realloc(c->files, (size_t)(c->nfiles + 1) * sizeof *grown);
  if (!grown) {
    snprintf(err, n, "%s: out of memory", path);
    return -1;
  }
  c->files = grown;
  sp_cmp_measured_file *f = &c->files[c->nfiles++];
  memset(f, 0, sizeof *f);
  f->path = path;
  f->root = json_incref(root);
  sp_rd r = {path, err, n, false};
  sp_check_schema(&r, root, "schedpredict-measurements");
  json_t *plan = sp_get(&r, root, "", "plan", JSON_OBJECT, false);
  if (plan) f->plan_sha256 = sp_get_str(&r, plan, "plan", "sha256", false);
  json_t *runner = sp_get(&r, root, "", "runner", JSON_OBJECT, false);
  if (runner) {
    f->shard = sp_get_str(&r, runner, "runner", "shard", false);
    f->backend = sp_get_str(&r, runner, "runner", "backend", false);
  }
  json_t *dev = sp_get(&r, root, "", "device", JSON_OBJECT, false);
  if (dev) f->device = sp_get_str(&r, dev, "device", "name", false);
  json_t *timing = sp_get(&r, root, "", "timing", JSON_OBJECT, false);
  if (timing) {
    f->statistic = sp_get_str(&r, timing, "timing", "statistic", false);
    json_t *fl = sp_get(&r, timing, "timing", "l2_flushed", JSON_TRUE, false);
    f->l2_flushed = fl && json_is_true(fl);
  }
  json_t *ks = sp_get(&r, root, "", "kernels", JSON_ARRAY, true);
  for (size_t i = 0; ks && i < json_array_size(ks) && !r.failed; i++) {
    char p[SP_PATH];
    sp_index(p, "kernels", i);
    json_t *kj = json_array_get(ks, i);
    if (!json_is_object(kj)) {
      sp_rd_fail(&r, p, "expected a kernel object, found %s", sp_json_kind(kj));
      break;
    }
    const char *id = sp_get_str(&r, kj, p, "id", true);
    json_t *cands = sp_get(&r, kj, p, "candidates", JSON_ARRAY, true);
    if (r.failed) break;
    sp_cmp_kernel *k = NULL;
    for (int j = 0; j < c->nkernels && !k; j++)
      if (strcmp(c->kernels[j].id, id) == 0) k = &c->kernels[j];
    if (!k) {
      sp_rd_fail(&r, p, "kernel '%s' is not in the plan %s (measured from another plan?)", id,
                 c->plan_path);
      break;
    }
    char cp[SP_PATH];
    sp_child(cp, p, "candidates");
    for (size_t j = 0; j < json_array_size(cands) && !r.failed; j++) {
      char q[SP_PATH];
      sp_index(q, cp, j);
      sp_read_measured_candidate(&r, json_array_get(cands, j), q, k);
    }
  }
  return r.failed ? -1 : 0;
}

int sp_cmp_time_from_duration(sp_cmp_data *c, char *err, size_t n) {
  for (int i = 0; i < c->nkernels; i++)
    for (int j = 0; j < c->kernels[i].ncand; j++) {
      sp_cmp_candidate *d = &c->kernels[i].cand[j];
      if (!d->measured_file) continue;
      if (d->ok && !(d->duration_us > 0)) {
        snprintf(err, n, "%s: kernel '%s' candidate %lld: --duration: no %s (measured without "
                 "CUPTI's duration; compare without --duration)", d->measured_file,
                 c->kernels[i].id, (long long)d->id, SP_DURATION_METRIC);
        return -1;
      }
      d->meas[SP_CMP_TIME_US] = d->duration_us;
      d->time_min_us = d->time_max_us = NAN; /* the events' spread: not this time's */
    }
  for (int i = 0; i < c->nfiles; i++) c->files[i].statistic = SP_DURATION_METRIC;
  return 0;
}

int sp_cmp_add_measured(sp_cmp_data *c, const char *path, char *err, size_t n) {
  return sp_read_file(c, path, sp_cmp_add_measured_json, err, n);
}

void sp_cmp_free(sp_cmp_data *c) {
  for (int i = 0; i < c->nkernels; i++) free(c->kernels[i].cand);
  free(c->kernels);
  for (int i = 0; i < c->nfiles; i++) json_decref(c->files[i].root);
  free(c->files);
  json_decref(c->plan_root);
  memset(c, 0, sizeof *c);
}
