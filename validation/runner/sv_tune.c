/* schedvalidate tune: OptACC's empirical searches on the GPU, and its table protocol beside the
   model's pick. Every candidate kernel of a plan is grid-strided, so a search point (G, V, W) is
   the same CUBIN launched with grid (G,1,1) and block (V,W,1): no compilation per point.

   Points are measured once (a cache shared by the methods; each method still counts, as its runs,
   the distinct points it asked for) and appended, flushed, to a JSON-lines file as they come, so
   that --resume replays the deterministic searches to the same answers without running a point
   again. Outputs are checked against the kernel's reference candidate for the plan launches and
   for every point that becomes an answer (--check answers, the default: a copy back and a host
   comparison of the written arrays cost ~10x a timed run on 128 MiB arrays), or for every point
   (--check all). An answer that fails its check is recorded as failed and its search is run
   again from the record (it then moves past that point). */
#include "sv_tune.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sv_output.h"
#include "sv_plan.h"
#include "sv_proc.h"
#include "sv_search.h"
#include "sv_tune_child.h"

#ifndef SV_VERSION
#define SV_VERSION "dev"
#endif


typedef struct {
  size_t cand;
  unsigned grid[3], block[3];
  char status[24];
  double ms; /* median, INFINITY unless status is ok */
  bool checked;
  double cost_s; /* wall time of its measurement */
} tpoint;

typedef struct {
  tpoint *p;
  size_t n, cap;
} tpoints;

typedef struct {
  /* options */
  const char *plan_path, *out, *points_path, *kernel_id, *method, *schedule, *start;
  bool force, resume, table, verbose, check_all;
  sv_bounds bounds;
  int grid_forced; /* sv_grid_kind, or -1: chosen per kernel */
  double grid_budget_s, time_budget_s, slow_factor, stop_after_s;
  long max_runs;
  int timeout_s;
  sv_gpu_opts go;
  /* state */
  sv_plan plan;
  json_t *plan_json;
  char sha[65], date[32], *command;
  tpoints *pts; /* per kernel */
  FILE *pf;
  sv_tchild *child;
  double t0;
  int fatal;
  char fatal_msg[2048];
  long measured; /* points run on the GPU by this process */
  char record_device[256]; /* the device the --resume record was measured on */
} tune;

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

static bool stopping(const tune *t) {
  return g_stop || t->fatal || (t->stop_after_s > 0 && sv_tchild_clock_s() - t->t0 > t->stop_after_s);
}

/* ---------------------------------------------------------------- the plan's extra fields */

static const json_t *kernel_json(const tune *t, size_t k) {
  return json_array_get(json_object_get(t->plan_json, "kernels"), k);
}
static const json_t *cand_json(const tune *t, size_t k, size_t c) {
  return json_array_get(json_object_get(kernel_json(t, k), "candidates"), c);
}
static const char *openacc_of(const tune *t, size_t k, size_t c) {
  const char *s = json_string_value(json_object_get(cand_json(t, k, c), "openacc"));
  return s ? s : "";
}
static bool expressible(const tune *t, size_t k, size_t c) {
  return strncmp(openacc_of(t, k, c), "not expressible", 15) != 0;
}
static long cand_by_id(const sv_kernel *k, json_int_t id) {
  for (size_t c = 0; c < k->n_cands; c++)
    if (k->cands[c].id == id) return (long)c;
  return -1;
}

/* OptACC's setting: the nvc default ("defaults": {"nvc": id}), else the candidate marked
   compiler_default. -1 when the plan names none. */
static long nvc_default(const tune *t, size_t k) {
  const json_t *d = json_object_get(json_object_get(kernel_json(t, k), "defaults"), "nvc");
  if (json_is_integer(d)) return cand_by_id(&t->plan.kernels[k], json_integer_value(d));
  for (size_t c = 0; c < t->plan.kernels[k].n_cands; c++)
    if (json_is_true(json_object_get(cand_json(t, k, c), "compiler_default"))) return (long)c;
  return -1;
}

/* The model's n best candidates that OpenACC can express, by model_rank. */
static size_t model_top(const tune *t, size_t k, size_t *out, size_t n) {
  const sv_kernel *kern = &t->plan.kernels[k];
  size_t got = 0;
  bool *used = calloc(kern->n_cands, sizeof *used);
  if (!used) return 0;
  while (got < n) {
    long best = -1;
    for (size_t c = 0; c < kern->n_cands; c++)
      if (!used[c] && expressible(t, k, c) && (best < 0 || kern->cands[c].model_rank < kern->cands[best].model_rank))
        best = (long)c;
    if (best < 0) break;
    used[best] = true;
    out[got++] = (size_t)best;
  }
  free(used);
  return got;
}

/* ---------------------------------------------------------------- points: cache and file */

static tpoint *lookup(tune *t, size_t k, size_t cand, const unsigned grid[3], const unsigned block[3]) {
  tpoints *ps = &t->pts[k];
  for (size_t i = 0; i < ps->n; i++) {
    tpoint *p = &ps->p[i];
    if (p->cand == cand && !memcmp(p->grid, grid, sizeof p->grid) && !memcmp(p->block, block, sizeof p->block))
      return p;
  }
  return NULL;
}

static tpoint *add_point(tune *t, size_t k, const tpoint *p) {
  tpoints *ps = &t->pts[k];
  if (ps->n == ps->cap) {
    size_t nc = ps->cap ? 2 * ps->cap : 256;
    tpoint *np = realloc(ps->p, nc * sizeof *np);
    if (!np) return NULL;
    ps->p = np;
    ps->cap = nc;
  }
  ps->p[ps->n] = *p;
  return &ps->p[ps->n++];
}

/* A measured or read point into the cache: a "check" line only confirms (ok) or fails a point
   measured before, keeping its time, so that a resumed search sees what the first one saw.
   Returns the cached point (NULL when out of memory). */
static tpoint *merge_point(tune *t, size_t k, const tpoint *p, bool is_check) {
  tpoint *old = lookup(t, k, p->cand, p->grid, p->block);
  if (old && is_check) {
    if (strcmp(p->status, "ok")) {
      snprintf(old->status, sizeof old->status, "%s", p->status);
      old->ms = INFINITY;
    }
    old->checked = old->checked || p->checked;
  } else if (old)
    *old = *p;
  else
    old = add_point(t, k, p);
  return old;
}

static json_t *dims(const unsigned d[3]) { return json_pack("[i,i,i]", d[0], d[1], d[2]); }

static void write_line(tune *t, size_t k, const tpoint *p, const char *method, const json_t *rec) {
  if (!t->pf) return;
  char date[32];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  const char *dev_name = json_string_value(json_object_get(sv_tchild_device(t->child), "name"));
  const json_t *tu = json_object_get(rec, "time_us");
  json_t *runs = json_array();
  for (size_t i = 0; i < json_array_size(json_object_get(tu, "runs")); i++)
    json_array_append_new(runs, json_real(json_number_value(json_array_get(json_object_get(tu, "runs"), i)) / 1000));
  const sv_kernel *kern = &t->plan.kernels[k];
  json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:i, s:i, s:i, s:o, s:o, s:s, s:o, s:o, s:b, s:f}",
                        "plan_sha256", t->sha, "device", dev_name ? dev_name : "?",
                        "date", date, "command", t->command, "kernel", kern->id, "candidate",
                        (json_int_t)kern->cands[p->cand].id, "method", method, "g", (int)p->grid[0], "v",
                        (int)p->block[0], "w", (int)p->block[1], "grid", dims(p->grid), "block", dims(p->block),
                        "status", p->status, "median_ms", isfinite(p->ms) ? json_real(p->ms) : json_null(),
                        "runs_ms", runs, "checked", p->checked, "cost_s", p->cost_s);
  const char *m = json_string_value(json_object_get(rec, "message"));
  if (m && *m) json_object_set_new(o, "message", sv_json_text(m));
  char *s = json_dumps(o, JSON_COMPACT);
  if (s) {
    fprintf(t->pf, "%s\n", s);
    fflush(t->pf);
  }
  free(s);
  json_decref(o);
}

static bool get_dims(const json_t *a, unsigned d[3]) {
  if (json_array_size(a) != 3) return false;
  for (size_t i = 0; i < 3; i++) {
    json_int_t v = json_integer_value(json_array_get(a, i));
    if (v < 1 || v > 0x7fffffff) return false;
    d[i] = (unsigned)v;
  }
  return true;
}

/* --resume: reads the points of an earlier run of the same plan. */
static int read_points(tune *t, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) return snprintf(err, errlen, "--resume %s: %s", path, strerror(errno)), -1;
  char *line = NULL;
  size_t cap = 0, lineno = 0, n = 0, bad = 0;
  int rc = 0;
  while (!rc && getline(&line, &cap, f) > 0) {
    lineno++;
    json_t *o = json_loads(line, 0, NULL);
    const char *sha = json_string_value(json_object_get(o, "plan_sha256"));
    const char *kid = json_string_value(json_object_get(o, "kernel"));
    const char *st = json_string_value(json_object_get(o, "status"));
    const char *method = json_string_value(json_object_get(o, "method"));
    tpoint p = {0};
    long k = -1, c = -1;
    if (kid)
      for (size_t i = 0; i < t->plan.n_kernels && k < 0; i++)
        if (!strcmp(t->plan.kernels[i].id, kid)) k = (long)i;
    if (k >= 0) c = cand_by_id(&t->plan.kernels[k], json_integer_value(json_object_get(o, "candidate")));
    if (sha && strcmp(sha, t->sha) && t->sha[0]) {
      snprintf(err, errlen, "%s:%zu: the points are of the plan with sha256 %.64s, not of %s (%s)", path, lineno, sha,
               t->plan_path, t->sha);
      rc = -1;
    } else if (!o || !st || !method || c < 0 || !get_dims(json_object_get(o, "grid"), p.grid) ||
               !get_dims(json_object_get(o, "block"), p.block)) {
      bad++; /* an interrupted write leaves a partial last line */
    } else {
      p.cand = (size_t)c;
      snprintf(p.status, sizeof p.status, "%s", st);
      const json_t *ms = json_object_get(o, "median_ms");
      p.ms = !strcmp(st, "ok") && json_is_number(ms) ? json_number_value(ms) : INFINITY;
      if (!strcmp(st, "ok") && !json_is_number(ms)) snprintf(p.status, sizeof p.status, "no_time");
      p.checked = json_is_true(json_object_get(o, "checked"));
      p.cost_s = json_number_value(json_object_get(o, "cost_s"));
      const char *dev = json_string_value(json_object_get(o, "device"));
      if (dev && !t->record_device[0]) snprintf(t->record_device, sizeof t->record_device, "%s", dev);
      merge_point(t, (size_t)k, &p, !strcmp(method, "check"));
      n++;
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
  if (!rc)
    fprintf(stderr, "schedvalidate tune: %zu points read from %s%s\n", n, path,
            bad ? " (lines that are not points of this plan were ignored)" : "");
  return rc;
}

/* ---------------------------------------------------------------- measuring */

/* Point (cand, grid, block) of kernel k: from the cache, else measured. With check, a cached
   point that was not checked yet is checked now (a "check" line). NULL when the run stops. */
static tpoint *evaluate(tune *t, size_t k, size_t cand, const unsigned grid[3], const unsigned block[3], bool check,
                        const char *method, double max_ms) {
  check = check || t->check_all;
  tpoint *old = lookup(t, k, cand, grid, block);
  if (old && (!check || old->checked || strcmp(old->status, "ok"))) return old;
  if (stopping(t)) return NULL;
  double t1 = sv_tchild_clock_s();
  char why[2048];
  int fatal = 0;
  const sv_candidate *cd = &t->plan.kernels[k].cands[cand];
  json_t *rec;
  if ((block[0] * block[1] * block[2]) % 32 && strstr(cd->source, "__shfl")) {
    /* A full-mask warp shuffle in a block of partial warps is undefined (a hang or a wrong sum). */
    rec = json_pack("{s:I, s:s, s:s}", "id", (json_int_t)cd->id, "status", "launch_error", "message",
                    "not run: the candidate combines its reduction with warp shuffles, which need whole warps "
                    "(vector_length x num_workers a multiple of 32)");
  } else
    rec = sv_tchild_point(t->child, cand, grid, block, check, old ? t->go.max_kernel_ms : max_ms, &fatal, why, sizeof why);
  if (!rec) {
    t->fatal = fatal ? fatal : 1;
    snprintf(t->fatal_msg, sizeof t->fatal_msg, "%s", why);
    return NULL;
  }
  const char *dev = json_string_value(json_object_get(sv_tchild_device(t->child), "name"));
  if (t->record_device[0] && dev && strcmp(dev, t->record_device)) { /* times of two GPUs do not mix */
    json_decref(rec);
    t->fatal = SV_EXIT_PLAN;
    snprintf(t->fatal_msg, sizeof t->fatal_msg, "the record %s was measured on %s, this device is %s: give another --points file",
             t->points_path, t->record_device, dev);
    return NULL;
  }
  t->measured++;
  tpoint p = {.cand = cand, .checked = false, .cost_s = sv_tchild_clock_s() - t1};
  memcpy(p.grid, grid, sizeof p.grid);
  memcpy(p.block, block, sizeof p.block);
  const char *st = json_string_value(json_object_get(rec, "status"));
  snprintf(p.status, sizeof p.status, "%s", st ? st : "fault");
  const json_t *res = json_object_get(rec, "result");
  p.checked = res != NULL;
  const json_t *med = json_object_get(json_object_get(rec, "time_us"), "median");
  p.ms = !strcmp(p.status, "ok") && json_is_number(med) ? json_number_value(med) / 1000 : INFINITY;
  bool is_check = old != NULL;
  write_line(t, k, &p, is_check ? "check" : method, rec);
  if (t->verbose || strcmp(p.status, "ok"))
  {
    const char *m = json_string_value(json_object_get(rec, "message"));
    char tm[64] = "";
    if (isfinite(p.ms)) snprintf(tm, sizeof tm, ", %.2f us", p.ms * 1000);
    fprintf(stderr, "schedvalidate tune: %s %s c%lld grid %u block %ux%u: %s%s%s%.200s\n", t->plan.kernels[k].id,
            is_check ? "check" : method, (long long)t->plan.kernels[k].cands[cand].id, grid[0], block[0], block[1],
            p.status, tm, m && *m ? ": " : "", m ? m : "");
  }
  json_decref(rec);
  return merge_point(t, k, &p, is_check);
}

typedef struct {
  tune *t;
  size_t k, cand;
  unsigned w;
  const char *method;
  double max_ms;
  sv_eval *e;
} objctx;

static void point_dims(sv_pt p, unsigned w, unsigned grid[3], unsigned block[3]) {
  grid[0] = (unsigned)p.g, grid[1] = grid[2] = 1;
  block[0] = (unsigned)p.v, block[1] = w, block[2] = 1;
}

static double objective(void *ctx, sv_pt p, double *cost) {
  objctx *o = ctx;
  unsigned grid[3], block[3];
  point_dims(p, o->w, grid, block);
  tpoint *tp = evaluate(o->t, o->k, o->cand, grid, block, false, o->method, o->max_ms);
  if (!tp) {
    o->e->stopped = true;
    *cost = 0;
    return INFINITY;
  }
  *cost = tp->cost_s;
  return tp->ms;
}

/* ---------------------------------------------------------------- methods */

typedef enum { M_GRID, M_NM, M_CS } mkind;

typedef struct {
  const char *name;
  mkind kind;
  sv_grid_kind grid;
  size_t cand;
  unsigned w;
  sv_pt start;
  sv_bounds bounds;
} mspec;

static json_t *point_json(const tune *t, size_t k, const tpoint *p) {
  if (!p) return json_null();
  return json_pack("{s:I, s:i, s:i, s:i, s:o, s:o, s:o, s:s, s:b}", "candidate",
                   (json_int_t)t->plan.kernels[k].cands[p->cand].id, "g", (int)p->grid[0], "v", (int)p->block[0],
                   "w", (int)p->block[1], "grid", dims(p->grid), "block", dims(p->block), "ms",
                   isfinite(p->ms) ? json_real(p->ms) : json_null(), "status", p->status, "checked", p->checked);
}

static json_t *num_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* Runs a search; its answer (the best point it measured) is checked, and when the check fails
   the search runs again from the record, which now holds the point as failed. */
static json_t *run_search(tune *t, size_t k, const mspec *m, double max_ms, double **vals_out, size_t *n_out) {
  sv_eval e;
  objctx o = {t, k, m->cand, m->w, m->name, max_ms, &e};
  tpoint *answer = NULL;
  for (int round = 0; round < 5; round++) {
    sv_eval_init(&e, objective, &o, m->kind == M_GRID ? 0 : t->max_runs, m->kind == M_GRID ? 0 : t->time_budget_s);
    if (m->kind == M_GRID) sv_search_grid(&e, m->grid, &m->bounds);
    else if (m->kind == M_NM) sv_search_nelder_mead(&e, &m->bounds, m->start, 100);
    else sv_search_coordinate(&e, &m->bounds, m->start);
    answer = NULL;
    if (e.best < 0 || stopping(t)) break;
    unsigned grid[3], block[3];
    point_dims(e.pts[e.best], m->w, grid, block);
    answer = evaluate(t, k, m->cand, grid, block, true, m->name, max_ms);
    if (!answer || !strcmp(answer->status, "ok")) break;
    fprintf(stderr, "schedvalidate tune: %s %s: the answer (%u, %u) failed its check (%s): searching again\n",
            t->plan.kernels[k].id, m->name, grid[0], block[0], answer->status);
    answer = NULL;
    sv_eval_free(&e);
  }
  json_t *pts = json_array();
  for (size_t i = 0; i < e.n; i++)
    json_array_append_new(pts, json_pack("[I,I,o]", (json_int_t)e.pts[i].g, (json_int_t)e.pts[i].v,
                                         num_or_null(e.vals[i])));
  json_t *r = json_pack("{s:s, s:I, s:i, s:I, s:o, s:b, s:f, s:o, s:o}", "method", m->name, "candidate",
                        (json_int_t)t->plan.kernels[k].cands[m->cand].id, "w", (int)m->w, "runs", (json_int_t)e.n,
                        "bounds",
                        json_pack("[I,I,I,I]", (json_int_t)m->bounds.g_lo, (json_int_t)m->bounds.g_hi,
                                  (json_int_t)m->bounds.v_lo, (json_int_t)m->bounds.v_hi),
                        "stopped", e.stopped || stopping(t), "gpu_s", e.spent_s, "answer", point_json(t, k, answer),
                        "points", pts);
  if (m->kind == M_GRID) json_object_set_new(r, "grid", json_string(sv_grid_name(m->grid)));
  else json_object_set_new(r, "start", json_pack("[I,I]", (json_int_t)m->start.g, (json_int_t)m->start.v));
  if (vals_out) {
    *vals_out = malloc((e.n ? e.n : 1) * sizeof **vals_out);
    if (*vals_out) memcpy(*vals_out, e.vals, e.n * sizeof **vals_out);
    *n_out = *vals_out ? e.n : 0;
  }
  sv_eval_free(&e);
  return r;
}

static tpoint *at_plan_launch(tune *t, size_t k, size_t c, const char *method) {
  const sv_candidate *cd = &t->plan.kernels[k].cands[c];
  return evaluate(t, k, c, cd->grid, cd->block, true, method, t->go.max_kernel_ms);
}

/* The model's top n at their own launches: "model" (the first, 0 runs) and "model+top3". */
static void model_methods(tune *t, size_t k, const size_t *top, size_t n, json_t *methods, bool both) {
  tpoint *first = NULL, *best = NULL;
  size_t runs = 0;
  for (size_t i = 0; i < n; i++) {
    tpoint *p = at_plan_launch(t, k, top[i], "model-top");
    if (!p) break;
    runs++;
    if (i == 0) first = p;
    if (!best || p->ms < best->ms) best = p;
  }
  if (both || n == 1)
    json_array_append_new(methods, json_pack("{s:s, s:i, s:o}", "method", "model", "runs", 0, "answer",
                                             point_json(t, k, first)));
  if (both || n > 1)
    json_array_append_new(methods, json_pack("{s:s, s:I, s:o}", "method", "model+top3", "runs", (json_int_t)runs,
                                           "answer", point_json(t, k, best)));
}

/* The reference grid: grid32 when its estimated time fits --grid-budget-s, else grid64, else
   grid128 (OptACC used grid64 for its time-consuming kernels). The estimate assumes every point
   takes the compiler default's time plus 0.3 ms of input reset and L2 flush per run. */
static sv_grid_kind choose_grid(const tune *t, double t_def_ms, const sv_bounds *b, char *why, size_t len) {
  if (t->grid_forced >= 0) {
    snprintf(why, len, "given with --grid");
    return (sv_grid_kind)t->grid_forced;
  }
  int runs = t->go.warmup + t->go.repeats;
  double per = isfinite(t_def_ms) ? runs * (t_def_ms + 0.3) / 1000 : 0;
  const sv_grid_kind order[] = {SV_GRID32, SV_GRID64, SV_GRID128};
  for (int i = 0; i < 3; i++) {
    double est = (double)sv_grid_points(order[i], b, NULL) * per;
    if (est <= t->grid_budget_s || i == 2) {
      snprintf(why, len, "%s: estimated %.1f s (%zu points x %d runs x %.3f ms) %s the %.0f s budget%s",
               sv_grid_name(order[i]), est, sv_grid_points(order[i], b, NULL), runs, t_def_ms + 0.3,
               est <= t->grid_budget_s ? "within" : "over", t->grid_budget_s,
               isfinite(t_def_ms) ? "" : " (the default failed: no estimate)");
      return order[i];
    }
  }
  return SV_GRID128;
}

static void add_scores(json_t *methods, double t_def, const double *gvals, size_t ng) {
  size_t i;
  json_t *m;
  json_array_foreach(methods, i, m) {
    const json_t *ms = json_object_get(json_object_get(m, "answer"), "ms");
    double x = json_is_number(ms) ? json_number_value(ms) : INFINITY;
    json_object_set_new(m, "speedup", isfinite(x) ? num_or_null(t_def / x) : json_null());
    json_object_set_new(m, "pct", gvals ? num_or_null(sv_pct(gvals, ng, x)) : json_null());
  }
}

static int parse_gv(const char *s, sv_pt *p) {
  char extra;
  long g, v;
  if (sscanf(s, "%ld,%ld%c", &g, &v, &extra) != 2 || g < 1 || v < 1 || g > 0x7fffffff || v > 1024) return -1;
  *p = (sv_pt){g, v};
  return 0;
}

static json_t *one_kernel(tune *t, size_t k) {
  const sv_kernel *kern = &t->plan.kernels[k];
  json_t *kj = json_pack("{s:s}", "id", kern->id);
  long d = nvc_default(t, k);
  size_t top[3], ntop = model_top(t, k, top, 3);
  if (d < 0 || !ntop) {
    json_object_set_new(kj, "status", json_string("skipped"));
    json_object_set_new(kj, "message", json_string(d < 0 ? "the plan names no compiler default for this kernel"
                                                         : "no candidate OpenACC can express"));
    fprintf(stderr, "schedvalidate tune: %s: skipped: %s\n", kern->id, json_string_value(json_object_get(kj, "message")));
    return kj;
  }
  size_t need[4] = {(size_t)d}, nn = 1;
  for (size_t i = 0; i < ntop; i++) need[nn++] = top[i];
  char why[2048];
  int rc = sv_tchild_kernel(t->child, k, need, nn, why, sizeof why);
  if (rc > 0) {
    t->fatal = rc;
    snprintf(t->fatal_msg, sizeof t->fatal_msg, "%s", why);
  }
  if (rc) {
    json_object_set_new(kj, "status", json_string(rc > 0 ? "not_run" : "failed"));
    json_object_set_new(kj, "message", sv_json_text(why));
    fprintf(stderr, "schedvalidate tune: %s: %s\n", kern->id, why);
    return kj;
  }
  const char *refwhy = NULL;
  if (!sv_tchild_reference_ok(t->child, &refwhy))
    json_object_set_new(kj, "reference_problem", sv_json_text(refwhy ? refwhy : ""));
  double t1 = sv_tchild_clock_s();
  tpoint *dp = at_plan_launch(t, k, (size_t)d, "default");
  double t_def = dp ? dp->ms : INFINITY;
  json_t *def = point_json(t, k, dp);
  if (json_is_object(def)) json_object_set_new(def, "openacc", json_string(openacc_of(t, k, (size_t)d)));
  json_object_set_new(kj, "default", def);
  json_t *mb = json_pack("{s:I, s:I, s:s}", "candidate", (json_int_t)kern->cands[top[0]].id, "model_rank",
                         (json_int_t)kern->cands[top[0]].model_rank, "openacc", openacc_of(t, k, top[0]));
  json_object_set_new(kj, "model_best", mb);
  /* a point much slower than the default is timed once (--slow-factor) */
  double max_ms = t->slow_factor > 0 && isfinite(t_def) ? t->slow_factor * t_def : t->go.max_kernel_ms;
  if (max_ms > t->go.max_kernel_ms) max_ms = t->go.max_kernel_ms;

  const sv_candidate *mc = &kern->cands[top[0]];
  sv_pt optacc = {256, 128}, model_pt = {mc->grid[0], mc->block[0]};
  sv_bounds model_b = t->bounds;
  sv_bounds_include(&model_b, model_pt.g, model_pt.v);
  json_t *methods = json_array();
  double *gvals = NULL;
  size_t ng = 0;
  if (t->table) {
    model_methods(t, k, top, ntop, methods, true);
    char gwhy[512];
    mspec g = {"grid", M_GRID, choose_grid(t, t_def, &t->bounds, gwhy, sizeof gwhy), (size_t)d, 1, {0, 0}, t->bounds};
    json_t *gj = run_search(t, k, &g, max_ms, &gvals, &ng);
    json_object_set_new(gj, "why", json_string(gwhy));
    json_object_set_new(kj, "grid", gj);
    const mspec ms[] = {{"nelder-mead", M_NM, 0, (size_t)d, 1, optacc, t->bounds},
                        {"coordinate", M_CS, 0, (size_t)d, 1, optacc, t->bounds},
                        {"nelder-mead-model", M_NM, 0, top[0], mc->block[1], model_pt, model_b}};
    for (size_t i = 0; i < 3; i++) json_array_append_new(methods, run_search(t, k, &ms[i], max_ms, NULL, NULL));
  } else {
    /* one method: --method on --schedule from --start */
    size_t cand = (size_t)d;
    unsigned w = 1;
    if (!strcmp(t->schedule, "model")) cand = top[0], w = mc->block[1];
    else if (strcmp(t->schedule, "default")) {
      long c = cand_by_id(kern, strtoll(t->schedule, NULL, 10));
      if (c < 0) {
        json_object_set_new(kj, "status", json_string("skipped"));
        json_object_set_new(kj, "message", json_string("--schedule names no candidate of this kernel"));
        json_decref(methods);
        return kj;
      }
      cand = (size_t)c, w = kern->cands[c].block[1];
    }
    sv_pt start = optacc;
    sv_bounds b = t->bounds;
    if (!strcmp(t->start, "model")) start = model_pt, b = model_b;
    else if (strcmp(t->start, "optacc")) parse_gv(t->start, &start), sv_bounds_include(&b, start.g, start.v);
    int gk = sv_grid_parse(t->method);
    if (!strcmp(t->method, "model") || !strcmp(t->method, "top3")) {
      model_methods(t, k, top, !strcmp(t->method, "model") ? 1 : ntop, methods, false);
    } else {
      mspec m = {t->method, gk >= 0 ? M_GRID : !strcmp(t->method, "coordinate") ? M_CS : M_NM,
                 gk >= 0 ? (sv_grid_kind)gk : SV_GRID32, cand, w, start, b};
      json_array_append_new(methods, run_search(t, k, &m, max_ms, gk >= 0 ? &gvals : NULL, &ng));
    }
  }
  add_scores(methods, t_def, gvals, ng);
  json_object_set_new(kj, "methods", methods);
  free(gvals);
  json_object_set_new(kj, "status", json_string(stopping(t) ? "interrupted" : "done"));
  json_object_set_new(kj, "wall_s", json_real(sv_tchild_clock_s() - t1));
  return kj;
}

/* ---------------------------------------------------------------- command line */

static void usage(FILE *f) {
  fprintf(f,
          "usage: schedvalidate tune PLAN.json -o SEARCH.json (--table | --method M) [options]\n"
          "Searches num_gangs x vector_length (OptACC's grids, Nelder-Mead, Coordinate Search) for each\n"
          "kernel of a plan on the GPU: one timed run (median of --repeats, L2 flushed) per point.\n"
          "\n"
          "  --table                 OptACC's protocol per kernel: the compiler default, the reference grid,\n"
          "                          model, model+top3, nelder-mead and coordinate from (256,128), and\n"
          "                          nelder-mead-model from the model's best (see README)\n"
          "  --method M              one method: grid32 grid64 grid128 grid32-vlpow2 grid-pow2 nelder-mead\n"
          "                          coordinate model top3\n"
          "  --schedule S            its schedule: default (the nvc default, W=1), model (the model's best\n"
          "                          expressible candidate, its W) or a candidate id (default: default)\n"
          "  --start S               optacc (256,128), model (the model's best launch) or G,V (default optacc)\n"
          "  -o, --output FILE       SEARCH.json, written atomically (replaced only with --force)\n"
          "  --points FILE           every measured point, appended as JSON lines (default: SEARCH.points.jsonl)\n"
          "  --resume FILE           read the points of an interrupted run from FILE and append to it\n"
          "  --bounds G0,G1,V0,V1    num_gangs and vector_length bounds (default 2,1024,2,1024)\n"
          "  --grid NAME             the table's reference grid (default: per kernel, see --grid-budget-s)\n"
          "  --grid-budget-s S       grid32 when its estimated time fits S, else grid64, else grid128 (4)\n"
          "  --max-runs N            a search stops after N distinct points (default 0: no limit)\n"
          "  --time-budget-s S       a search stops when its points took S seconds (default 0: none)\n"
          "  --stop-after-s S        the whole command stops after S seconds, writing what it has\n"
          "  --check answers|all     compare outputs with the reference for each answer (default) or every point\n"
          "  --slow-factor F         a point whose first run is F times slower than the default's is timed\n"
          "                          once (default 4; 0: always --repeats)\n"
          "  --repeats N (5), --warmup N (1), --max-kernel-ms MS (2000), --timeout-s S (60), --device N,\n"
          "  --kernel ID, --force, --verbose, -h/--help\n"
          "\n"
          "Exit status: 0 done; 1 failed or interrupted (the output holds what was done; rerun with\n"
          "--resume); 2 bad usage or the output exists; 3 bad plan or points file; 4 no GPU.\n");
}

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "schedvalidate tune: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see schedvalidate tune --help)\n");
  return SV_EXIT_USAGE;
}

static int num(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !(v >= lo && v <= hi)) return -1;
  *out = v;
  return 0;
}

/* num() for a whole number. */
static int whole(const char *s, double lo, double hi, long *out) {
  double v;
  if (num(s, lo, hi, &v) || v != floor(v)) return -1;
  *out = (long)v;
  return 0;
}

static char *join_args(int argc, char **argv) {
  size_t n = 32;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = calloc(n, 1);
  if (!s) return NULL;
  strcpy(s, "schedvalidate");
  for (int i = 0; i < argc; i++) {
    strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

static void plan_sha(const char *path, char out[65]) {
  char *argv[] = {"sha256sum", "--", (char *)path, NULL};
  char *o = NULL;
  size_t len = 0;
  out[0] = 0;
  if (sv_capture(argv, 60, 1, &o, &len) == 0 && o && len >= 64) snprintf(out, 65, "%.64s", o);
  free(o);
}

static int parse_options(tune *t, int argc, char **argv) {
  enum { O_TABLE = 256, O_METHOD, O_SCHED, O_START, O_POINTS, O_RESUME, O_BOUNDS, O_GRID, O_GBUDGET, O_MAXRUNS,
         O_TBUDGET, O_STOP, O_CHECK, O_SLOW, O_REPEATS, O_WARMUP, O_MAXMS, O_TIMEOUT, O_DEVICE, O_KERNEL, O_FORCE,
         O_VERBOSE };
  static const struct option opts[] = {
      {"output", required_argument, 0, 'o'}, {"table", no_argument, 0, O_TABLE},
      {"method", required_argument, 0, O_METHOD}, {"schedule", required_argument, 0, O_SCHED},
      {"start", required_argument, 0, O_START}, {"points", required_argument, 0, O_POINTS},
      {"resume", required_argument, 0, O_RESUME}, {"bounds", required_argument, 0, O_BOUNDS},
      {"grid", required_argument, 0, O_GRID}, {"grid-budget-s", required_argument, 0, O_GBUDGET},
      {"max-runs", required_argument, 0, O_MAXRUNS}, {"time-budget-s", required_argument, 0, O_TBUDGET},
      {"stop-after-s", required_argument, 0, O_STOP}, {"check", required_argument, 0, O_CHECK},
      {"slow-factor", required_argument, 0, O_SLOW}, {"repeats", required_argument, 0, O_REPEATS},
      {"warmup", required_argument, 0, O_WARMUP}, {"max-kernel-ms", required_argument, 0, O_MAXMS},
      {"timeout-s", required_argument, 0, O_TIMEOUT}, {"device", required_argument, 0, O_DEVICE},
      {"kernel", required_argument, 0, O_KERNEL}, {"force", no_argument, 0, O_FORCE},
      {"verbose", no_argument, 0, O_VERBOSE}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  long v;
  int ch;
  opterr = 0;
  optind = 1;
  while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'o': t->out = optarg; break;
    case O_TABLE: t->table = true; break;
    case O_METHOD:
      if (sv_grid_parse(optarg) < 0 && strcmp(optarg, "nelder-mead") && strcmp(optarg, "coordinate") &&
          strcmp(optarg, "model") && strcmp(optarg, "top3"))
        return bad_usage("--method '%s': expected a grid name, nelder-mead, coordinate, model or top3", optarg);
      t->method = optarg;
      break;
    case O_SCHED:
      if (strcmp(optarg, "default") && strcmp(optarg, "model") && whole(optarg, 0, 9e15, &v))
        return bad_usage("--schedule '%s': expected default, model or a candidate id", optarg);
      t->schedule = optarg;
      break;
    case O_START: {
      sv_pt p;
      if (strcmp(optarg, "optacc") && strcmp(optarg, "model") && parse_gv(optarg, &p))
        return bad_usage("--start '%s': expected optacc, model or GANGS,VECTOR (vector at most 1024)", optarg);
      t->start = optarg;
      break;
    }
    case O_POINTS: t->points_path = optarg; break;
    case O_RESUME: t->points_path = optarg, t->resume = true; break;
    case O_BOUNDS: {
      long a, b, c, d;
      char extra;
      if (sscanf(optarg, "%ld,%ld,%ld,%ld%c", &a, &b, &c, &d, &extra) != 4 || a < 1 || b < a || c < 1 || d < c ||
          b > 0x7fffffff || d > 1024)
        return bad_usage("--bounds '%s': expected G0,G1,V0,V1 with 1 <= G0 <= G1 and 1 <= V0 <= V1 <= 1024", optarg);
      t->bounds = (sv_bounds){a, b, c, d};
      break;
    }
    case O_GRID:
      if ((t->grid_forced = sv_grid_parse(optarg)) < 0)
        return bad_usage("--grid '%s': expected grid32, grid64, grid128, grid32-vlpow2 or grid-pow2", optarg);
      break;
    case O_GBUDGET:
      if (num(optarg, 0, 1e9, &t->grid_budget_s)) return bad_usage("--grid-budget-s '%s': expected seconds", optarg);
      break;
    case O_MAXRUNS:
      if (whole(optarg, 0, 1e9, &v)) return bad_usage("--max-runs '%s': expected a count", optarg);
      t->max_runs = v;
      break;
    case O_TBUDGET:
      if (num(optarg, 0, 1e9, &t->time_budget_s)) return bad_usage("--time-budget-s '%s': expected seconds", optarg);
      break;
    case O_STOP:
      if (num(optarg, 0, 1e9, &t->stop_after_s)) return bad_usage("--stop-after-s '%s': expected seconds", optarg);
      break;
    case O_CHECK:
      if (strcmp(optarg, "answers") && strcmp(optarg, "all")) return bad_usage("--check '%s': expected answers or all", optarg);
      t->check_all = !strcmp(optarg, "all");
      break;
    case O_SLOW:
      if (num(optarg, 0, 1e9, &t->slow_factor)) return bad_usage("--slow-factor '%s': expected a factor", optarg);
      break;
    case O_REPEATS:
      if (whole(optarg, 1, 1000, &v)) return bad_usage("--repeats '%s': expected 1 to 1000", optarg);
      t->go.repeats = (int)v;
      break;
    case O_WARMUP:
      if (whole(optarg, 1, 1000, &v)) return bad_usage("--warmup '%s': expected 1 to 1000", optarg);
      t->go.warmup = (int)v;
      break;
    case O_MAXMS:
      if (num(optarg, 1e-6, 1e9, &t->go.max_kernel_ms)) return bad_usage("--max-kernel-ms '%s': expected milliseconds", optarg);
      break;
    case O_TIMEOUT:
      if (whole(optarg, 1, 86400, &v)) return bad_usage("--timeout-s '%s': expected 1 to 86400", optarg);
      t->timeout_s = (int)v;
      break;
    case O_DEVICE:
      if (whole(optarg, 0, 1024, &v)) return bad_usage("--device '%s': expected a GPU ordinal", optarg);
      t->go.device = (int)v;
      break;
    case O_KERNEL: t->kernel_id = optarg; break;
    case O_FORCE: t->force = true; break;
    case O_VERBOSE: t->verbose = true; break;
    case 'h': usage(stdout); return -1;
    default: return bad_usage("unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return bad_usage("%s", "expected exactly one plan file");
  t->plan_path = argv[optind];
  if (!t->out) return bad_usage("%s", "no output file: give -o SEARCH.json");
  if (t->table == (t->method != NULL)) return bad_usage("%s", "give either --table or --method");
  if (t->table && (strcmp(t->schedule, "default") || strcmp(t->start, "optacc")))
    return bad_usage("%s", "--schedule and --start go with --method (the table fixes them)");
  return 0;
}

static json_t *output_json(tune *t, json_t *kernels) {
  const json_t *dev = sv_tchild_device(t->child);
  return json_pack("{s:s, s:i, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}, s:O, s:{s:i, s:i, s:s, s:b, s:[I,I,I,I], "
                   "s:s, s:I, s:f, s:f, s:f, s:o}, s:s, s:I, s:o}",
                   "schema", "schedpredict-search", "schema_version", 1, "plan", "path", t->plan_path, "sha256",
                   t->sha, "runner", "tool", "schedvalidate tune", "version", SV_VERSION, "command", t->command,
                   "date", t->date, "device", dev ? dev : json_null(), "settings", "warmup", t->go.warmup, "repeats",
                   t->go.repeats, "statistic", "median", "l2_flushed", 1, "bounds", (json_int_t)t->bounds.g_lo,
                   (json_int_t)t->bounds.g_hi, (json_int_t)t->bounds.v_lo, (json_int_t)t->bounds.v_hi, "check",
                   t->check_all ? "all" : "answers", "max_runs", (json_int_t)t->max_runs, "time_budget_s",
                   t->time_budget_s, "grid_budget_s", t->grid_budget_s, "slow_factor", t->slow_factor,
                   "grid", t->grid_forced >= 0 ? json_string(sv_grid_name((sv_grid_kind)t->grid_forced))
                                               : json_string("per kernel"),
                   "points_file", t->points_path, "points_measured", (json_int_t)t->measured, "kernels", kernels);
}

/* Kernel k is one to search (--kernel). */
static bool selected(const tune *t, size_t k) {
  return !t->kernel_id || !strcmp(t->plan.kernels[k].id, t->kernel_id);
}

int sv_tune_main(int argc, char **argv) {
  tune t = {.schedule = "default", .start = "optacc", .bounds = {2, 1024, 2, 1024}, .grid_forced = -1,
            .grid_budget_s = 4, .slow_factor = 4, .timeout_s = 60,
            .go = {.metrics = false, .warmup = 1, .repeats = 5, .max_kernel_ms = 2000, .device = 0}};
  int rc = parse_options(&t, argc, argv);
  if (rc) return rc < 0 ? SV_EXIT_OK : rc;
  char err[8192], points_buf[4096];
  if (!t.points_path) {
    size_t n = strlen(t.out);
    if (n > 5 && !strcmp(t.out + n - 5, ".json")) n -= 5;
    snprintf(points_buf, sizeof points_buf, "%.*s.points.jsonl", (int)n, t.out);
    t.points_path = points_buf;
  }
  if (!t.force && access(t.out, F_OK) == 0)
    return fprintf(stderr, "schedvalidate tune: %s exists; use --force to replace it\n", t.out), SV_EXIT_USAGE;
  if (!t.resume && !t.force && access(t.points_path, F_OK) == 0)
    return fprintf(stderr, "schedvalidate tune: %s exists; continue it with --resume %s, or replace it with --force\n",
                   t.points_path, t.points_path),
           SV_EXIT_USAGE;
  if (sv_plan_load(t.plan_path, &t.plan, err, sizeof err))
    return fprintf(stderr, "schedvalidate tune: %s\n", err), SV_EXIT_PLAN;
  json_error_t je;
  t.plan_json = json_load_file(t.plan_path, 0, &je);
  plan_sha(t.plan_path, t.sha);
  t.command = join_args(argc, argv);
  t.pts = calloc(t.plan.n_kernels ? t.plan.n_kernels : 1, sizeof *t.pts);
  time_t now = time(NULL);
  strftime(t.date, sizeof t.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  rc = SV_EXIT_OK;
  if (!t.plan_json || !t.pts || !t.command) rc = SV_EXIT_ERROR, fprintf(stderr, "schedvalidate tune: out of memory\n");
  size_t todo = 0, done_k = 0;
  for (size_t k = 0; k < t.plan.n_kernels; k++) todo += selected(&t, k);
  if (!rc && !todo && t.kernel_id)
    rc = SV_EXIT_USAGE, fprintf(stderr, "schedvalidate tune: --kernel %s: no such kernel in %s\n", t.kernel_id, t.plan_path);
  if (!rc && t.resume && access(t.points_path, F_OK) == 0 && read_points(&t, t.points_path, err, sizeof err))
    rc = SV_EXIT_PLAN, fprintf(stderr, "schedvalidate tune: %s\n", err);
  if (!rc && !(t.pf = fopen(t.points_path, t.resume ? "a+" : "w")))
    rc = SV_EXIT_ERROR, fprintf(stderr, "schedvalidate tune: cannot write %s: %s\n", t.points_path, strerror(errno));
  if (!rc && t.resume && fseek(t.pf, -1, SEEK_END) == 0 && fgetc(t.pf) != '\n')
    fputc('\n', t.pf); /* end the partial line an interrupted write left */
  if (rc) goto done;

  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop; /* no SA_RESTART: a wait for the child returns at once */
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  t.t0 = sv_tchild_clock_s();
  t.child = sv_tchild_new(&t.plan, &t.go, t.timeout_s);
  json_t *kernels = json_array();
  for (size_t k = 0; k < t.plan.n_kernels; k++) {
    if (!selected(&t, k)) continue;
    if (stopping(&t)) {
      json_array_append_new(kernels, json_pack("{s:s, s:s, s:s}", "id", t.plan.kernels[k].id, "status", "not_run",
                                               "message", t.fatal ? t.fatal_msg : "the run was stopped before it"));
      continue;
    }
    long before = t.measured;
    size_t recorded = t.pts[k].n;
    double t1 = sv_tchild_clock_s();
    json_t *kj = one_kernel(&t, k);
    json_array_append_new(kernels, kj);
    fprintf(stderr, "schedvalidate tune: [%zu/%zu] %s: %s, %ld points measured (%zu were in the record), %.1f s\n",
            ++done_k, todo, t.plan.kernels[k].id, json_string_value(json_object_get(kj, "status")),
            t.measured - before, recorded, sv_tchild_clock_s() - t1);
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (t.fatal) {
    fprintf(stderr, "schedvalidate tune: %s\n", t.fatal_msg);
    rc = t.fatal > 1 ? t.fatal : SV_EXIT_ERROR;
  } else if (stopping(&t)) {
    fprintf(stderr, "schedvalidate tune: %s; continue with --resume %s\n",
            g_stop ? "interrupted" : "--stop-after-s reached", t.points_path);
    rc = SV_EXIT_ERROR;
  }
  if (t.fatal == SV_EXIT_NOGPU && !t.measured) { /* nothing to keep: leave no files behind */
    json_decref(kernels);
    if (!t.resume) remove(t.points_path);
    goto done;
  }
  json_t *o = output_json(&t, kernels);
  if (!o || sv_write_json_atomic(o, t.out, t.force, err, sizeof err)) {
    fprintf(stderr, "schedvalidate tune: %s\n", o ? err : "out of memory building the output");
    if (!rc) rc = SV_EXIT_ERROR;
  } else
    fprintf(stderr, "schedvalidate tune: wrote %s (%ld points measured, all in %s)\n", t.out, t.measured, t.points_path);
  json_decref(o);

done:
  sv_tchild_free(t.child);
  if (t.pf) fclose(t.pf);
  for (size_t k = 0; t.pts && k < t.plan.n_kernels; k++) free(t.pts[k].p);
  free(t.pts);
  free(t.command);
  json_decref(t.plan_json);
  sv_plan_free(&t.plan);
  return rc;
}
