/* The comparison as text, JSON (schema schedpredict-comparison) and CSV (one row a candidate). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/compare.h"

/* Medians and counts over all kernels. */
typedef struct sp_cmp_summary {
  int kernels, with_stats, ok, failed, unmeasured, wrong;
  double r2_cost, rho_cost, r2_time, rho_time, regret, speedup, geo_speedup, l1, l2, dram;
  int picked_best, within_10pct, speedup_n, faster, slower;
  sp_cmp_exactness requests, sectors, l1_miss_sectors, l2_sectors;
} sp_cmp_summary;

static double sp_median_of(const sp_cmp_data *c, size_t offset, int *count) {
  double *v = malloc((size_t)(c->nkernels ? c->nkernels : 1) * sizeof *v);
  size_t n = 0;
  for (int i = 0; v && i < c->nkernels; i++) {
    double x = *(const double *)((const char *)&c->kernels[i].st + offset);
    if (!isnan(x)) v[n++] = x;
  }
  double m = v ? sp_cmp_median(v, n) : NAN;
  free(v);
  if (count) *count = (int)n;
  return m;
}

static void sp_add_exactness(sp_cmp_exactness *sum, const sp_cmp_exactness *e) {
  if (!e->n) return;
  if (!sum->n || fabs(e->worst_rel) > fabs(sum->worst_rel)) sum->worst_rel = e->worst_rel;
  sum->n += e->n;
  sum->exact += e->exact;
  sum->within_1pct += e->within_1pct;
}

static sp_cmp_summary sp_summarize(const sp_cmp_data *c) {
  sp_cmp_summary s;
  memset(&s, 0, sizeof s);
  s.requests.worst_rel = s.sectors.worst_rel = s.l1_miss_sectors.worst_rel = s.l2_sectors.worst_rel =
      NAN;
  double logsum = 0;
  for (int i = 0; i < c->nkernels; i++) {
    const sp_cmp_kernel_stats *st = &c->kernels[i].st;
    s.kernels++;
    s.ok += st->n_ok;
    s.failed += st->n_failed;
    s.unmeasured += st->n_unmeasured;
    for (int j = 0; j < c->kernels[i].ncand; j++) s.wrong += c->kernels[i].cand[j].wrong_result;
    if (st->chosen < 0) continue;
    s.with_stats++;
    s.picked_best += st->regret == 0;
    s.within_10pct += st->regret <= 0.10;
    if (!isnan(st->speedup)) {
      s.speedup_n++;
      logsum += log(st->speedup);
      s.faster += st->speedup > 1;
      s.slower += st->speedup < 1;
    }
    sp_add_exactness(&s.requests, &st->requests);
    sp_add_exactness(&s.sectors, &st->sectors);
    sp_add_exactness(&s.l1_miss_sectors, &st->l1_miss_sectors);
    sp_add_exactness(&s.l2_sectors, &st->l2_sectors);
  }
#define SP_MED(field) sp_median_of(c, offsetof(sp_cmp_kernel_stats, field), NULL)
  s.r2_cost = SP_MED(r2_cost);
  s.rho_cost = SP_MED(rho_cost);
  s.r2_time = SP_MED(r2_time);
  s.rho_time = SP_MED(rho_time);
  s.regret = SP_MED(regret);
  s.speedup = SP_MED(speedup);
  s.l1 = SP_MED(l1_mae_pp);
  s.l2 = SP_MED(l2_mae_pp);
  s.dram = SP_MED(dram_median_abs_rel);
#undef SP_MED
  s.geo_speedup = s.speedup_n ? exp(logsum / s.speedup_n) : NAN;
  return s;
}

/* Kernels in report order: the dissertation's eight first (in Table 7.3's order), then the rest
 * as the plan lists them. */
static int *sp_kernel_order(const sp_cmp_data *c) {
  int *order = malloc((size_t)(c->nkernels ? c->nkernels : 1) * sizeof *order), n = 0;
  if (!order) return NULL;
  for (int row = 0; row < 8; row++)
    for (int i = 0; i < c->nkernels; i++)
      if (c->kernels[i].paper_row == row) order[n++] = i;
  for (int i = 0; i < c->nkernels; i++)
    if (c->kernels[i].paper_row < 0) order[n++] = i;
  return order;
}

/* Median of a column of the dissertation's Table 7.3 (all eight rows). */
static double sp_paper_median(size_t offset) {
  double v[8];
  for (int i = 0; i < 8; i++) v[i] = *(const double *)((const char *)&sp_cmp_paper[i] + offset);
  return sp_cmp_median(v, 8);
}

/* ---- text ------------------------------------------------------------------------------------ */

/* A number into buf with printf format fmt, or "n/a" when NaN. */
static const char *sp_f(char *buf, size_t n, const char *fmt, double x) {
  if (isnan(x)) snprintf(buf, n, "n/a");
  else if (isinf(x)) snprintf(buf, n, "%sinf", x < 0 ? "-" : "");
  else snprintf(buf, n, fmt, x);
  return buf;
}

static void sp_text_exactness(FILE *out, const char *what, const sp_cmp_exactness *e) {
  char w[32];
  if (!e->n) {
    fprintf(out, "    %-16s not measured\n", what);
    return;
  }
  fprintf(out, "    %-16s %d/%d exact, %d/%d within 1 %%, worst %s %%\n", what, e->exact, e->n,
          e->within_1pct, e->n, sp_f(w, sizeof w, "%+.2f", 100 * e->worst_rel));
}

static const char *sp_ordinal(int n) {
  return (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd"
                                                 : n % 10 == 3 ? "rd" : "th";
}

/* " (2 compile_error, 1 timeout)": the statuses other than ok of nk kernels from k. */
static void sp_text_status_counts(FILE *out, const sp_cmp_kernel *k, int nk) {
  bool any = false;
  for (int s = 1; s < SP_CMP_NSTATUS; s++) {
    int n = 0;
    for (int i = 0; i < nk; i++)
      for (int j = 0; j < k[i].ncand; j++)
        n += k[i].cand[j].measured_file && strcmp(k[i].cand[j].status, sp_cmp_statuses[s]) == 0;
    if (n) fprintf(out, "%s%d %s", any ? ", " : " (", n, sp_cmp_statuses[s]);
    any |= n > 0;
  }
  if (any) fputs(")", out);
}

static void sp_text_stats(FILE *out, const sp_cmp_kernel *k) {
  const sp_cmp_kernel_stats *st = &k->st;
  char a[32], b[32], d[32], e[32];
  fprintf(out, "  measured ok: %d, not ok (excluded): %d", st->n_ok, st->n_failed);
  sp_text_status_counts(out, k, 1);
  fprintf(out, ", not measured: %d\n", st->n_unmeasured);
  if (st->chosen < 0) {
    fputs("  no candidate measured ok: no statistics\n", out);
    return;
  }
  fprintf(out, "  modeled cost vs measured time:  R^2 %s (log-log %s), Spearman rho %s\n",
          sp_f(a, sizeof a, "%.3f", st->r2_cost), sp_f(b, sizeof b, "%.3f", st->r2_log_cost),
          sp_f(d, sizeof d, "%.3f", st->rho_cost));
  fprintf(out, "  modeled time vs measured time:  R^2 %s, Spearman rho %s\n",
          sp_f(a, sizeof a, "%.3f", st->r2_time), sp_f(b, sizeof b, "%.3f", st->rho_time));
  const sp_cmp_candidate *ch = &k->cand[st->chosen], *best = &k->cand[st->best];
  fprintf(out,
          "  model's pick: candidate %lld (model rank %d%s) %.2f us, %d%s fastest of %d "
          "(percentile %.1f), regret %+.1f %% against the measured best, candidate %lld "
          "(model rank %d) %.2f us\n",
          (long long)ch->id, ch->model_rank,
          ch->model_rank == 1 ? "" : ": the better-ranked ones did not run ok",
          ch->meas[SP_CMP_TIME_US], st->chosen_measured_rank, sp_ordinal(st->chosen_measured_rank),
          st->n_ok, st->percentile, 100 * st->regret, (long long)best->id, best->model_rank,
          best->meas[SP_CMP_TIME_US]);
  if (st->deflt < 0) {
    fputs("  speedup over the compiler default: the plan marks no compiler default\n", out);
  } else {
    const sp_cmp_candidate *df = &k->cand[st->deflt];
    fprintf(out,
            "  speedup over the compiler default (candidate %lld, %s): %sx measured, %sx "
            "predicted\n",
            (long long)df->id, df->ok ? sp_f(e, sizeof e, "%.2f us", df->meas[SP_CMP_TIME_US])
                                      : (df->status ? df->status : "not measured"),
            sp_f(a, sizeof a, "%.2f", st->speedup), sp_f(b, sizeof b, "%.2f", st->speedup_model));
  }
  fprintf(out,
          "  hit rates, mean |modeled - measured|: L1 %s points; L2 %s points from sectors "
          "(%s against the raw lts__t_sector_op_read_hit_rate)\n",
          sp_f(a, sizeof a, "%.1f", st->l1_mae_pp), sp_f(b, sizeof b, "%.1f", st->l2_mae_pp),
          sp_f(d, sizeof d, "%.1f", st->l2_raw_mae_pp));
  fprintf(out, "  DRAM bytes read: median |error| %s %%, worst %s %%\n",
          sp_f(a, sizeof a, "%.1f", 100 * st->dram_median_abs_rel),
          sp_f(b, sizeof b, "%+.1f", 100 * st->dram_worst_rel));
  sp_text_exactness(out, "load requests", &st->requests);
  sp_text_exactness(out, "load sectors", &st->sectors);
  sp_text_exactness(out, "L1 miss sectors", &st->l1_miss_sectors);
  sp_text_exactness(out, "L2 read sectors", &st->l2_sectors);
  if (st->n_register_limited)
    fprintf(out,
            "  register-limited: %d of the %d held registers that let fewer of their blocks on an "
            "SM than the model assumed; measured / predicted time %s of them, %s of the others "
            "(median; schedpredict --registers N gives the model the count)\n",
            st->n_register_limited, st->n_ok, sp_f(a, sizeof a, "%.2fx", st->limited_time_ratio),
            sp_f(b, sizeof b, "%.2fx", st->others_time_ratio));
}

static void sp_text_candidates(FILE *out, const sp_cmp_kernel *k) {
  int *order = malloc((size_t)(k->ncand ? k->ncand : 1) * sizeof *order);
  if (!order) return;
  /* by model rank (insertion sort: a few dozen candidates) */
  for (int i = 0; i < k->ncand; i++) {
    int j = i;
    for (; j > 0 && k->cand[order[j - 1]].model_rank > k->cand[i].model_rank; j--)
      order[j] = order[j - 1];
    order[j] = i;
  }
  fprintf(out, "\n  %5s %5s %-26s %-11s %9s %9s %11s %7s %11s %7s %11s %14s %17s\n", "rank", "id",
          "mapping", "block", "pred us", "meas us", "requests", "err %", "sectors", "err %",
          "L1 hit %", "L2 hit %", "DRAM MB");
  fprintf(out, "  %5s %5s %-26s %-11s %9s %9s %11s %7s %11s %7s %11s %14s %17s\n", "", "",
          "(* pick, d default, b best)", "", "", "", "(measured)", "", "(measured)", "",
          "model/GPU", "model/GPU(raw)", "model/GPU");
  for (int r = 0; r < k->ncand; r++) {
    int i = order[r];
    const sp_cmp_candidate *c = &k->cand[i];
    char map[40], blk[24], t1[16], t2[16], q[16], qe[16], s[16], se[16], l1[24], l2[32], dr[32];
    snprintf(map, sizeof map, "%c%c%c %.22s", i == k->st.chosen ? '*' : ' ',
             c->compiler_default ? 'd' : ' ', i == k->st.best ? 'b' : ' ',
             c->cuda_mapping ? c->cuda_mapping : (c->pattern ? c->pattern : "?"));
    snprintf(blk, sizeof blk, "%lldx%lldx%lld", (long long)c->block[0], (long long)c->block[1],
             (long long)c->block[2]);
    sp_f(t1, sizeof t1, "%.2f", c->model[SP_CMP_TIME_US]);
    if (!c->ok) {
      /* the first line of the message (a compiler log can be long) */
      const char *msg = c->message ? c->message : "";
      int mlen = (int)strcspn(msg, "\r\n");
      fprintf(out, "  %5d %5lld %-26s %-11s %9s %9s  %s%s%.*s%s\n", c->model_rank,
              (long long)c->id, map, blk, t1, "-", c->measured_file ? c->status : "not measured",
              *msg ? ": " : "", mlen < 160 ? mlen : 160, msg, msg[mlen] || mlen > 160 ? " ..." : "");
      continue;
    }
    sp_f(t2, sizeof t2, "%.2f", c->meas[SP_CMP_TIME_US]);
    sp_f(q, sizeof q, "%.0f", c->meas[SP_CMP_LD_REQUESTS]);
    sp_f(qe, sizeof qe, "%+.1f",
         100 * (c->model[SP_CMP_LD_REQUESTS] / c->meas[SP_CMP_LD_REQUESTS] - 1));
    sp_f(s, sizeof s, "%.0f", c->meas[SP_CMP_LD_SECTORS]);
    sp_f(se, sizeof se, "%+.1f", 100 * (c->model[SP_CMP_LD_SECTORS] / c->meas[SP_CMP_LD_SECTORS] - 1));
    char x[16], y[16], z[16];
    snprintf(l1, sizeof l1, "%s/%s", sp_f(x, sizeof x, "%.1f", c->model[SP_CMP_L1_HIT_PCT]),
             sp_f(y, sizeof y, "%.1f", c->meas[SP_CMP_L1_HIT_PCT]));
    snprintf(l2, sizeof l2, "%s/%s(%s)", sp_f(x, sizeof x, "%.0f", c->model[SP_CMP_L2_HIT_PCT]),
             sp_f(y, sizeof y, "%.0f", c->meas[SP_CMP_L2_HIT_PCT]),
             sp_f(z, sizeof z, "%.0f", c->l2_hit_raw_pct));
    snprintf(dr, sizeof dr, "%s/%s", sp_f(x, sizeof x, "%.4g", c->model[SP_CMP_DRAM_BYTES] / 1e6),
             sp_f(y, sizeof y, "%.4g", c->meas[SP_CMP_DRAM_BYTES] / 1e6));
    fprintf(out, "  %5d %5lld %-26s %-11s %9s %9s %11s %7s %11s %7s %11s %14s %17s\n",
            c->model_rank, (long long)c->id, map, blk, t1, t2, q, qe, s, se, l1, l2, dr);
  }
  free(order);
}

static void sp_text_table(FILE *out, const sp_cmp_data *c, const int *order) {
  fputs("\nBeside the dissertation's Table 7.3 (Xu: K40, OpenUH; R^2 of modeled cost vs measured "
        "time, speedup of the model's pick over the compiler default):\n\n",
        out);
  fprintf(out, "  %-40s %4s %7s %7s %7s %7s %8s %6s %8s | %8s %8s\n", "kernel [Table 7.3 row]", "ok", "R^2",
          "rho", "R^2(t)", "rho(t)", "regret%", "pctl", "speedup", "paper R2", "speedup");
  for (int o = 0; o < c->nkernels; o++) {
    const sp_cmp_kernel *k = &c->kernels[order[o]];
    const sp_cmp_kernel_stats *st = &k->st;
    char name[64], v[8][16];
    if (k->paper_row >= 0)
      snprintf(name, sizeof name, "%.24s [%s]", k->id, sp_cmp_paper[k->paper_row].name);
    else snprintf(name, sizeof name, "%.40s", k->id);
    fprintf(out, "  %-40s %4d %7s %7s %7s %7s %8s %6s %8s", name, st->n_ok,
            sp_f(v[0], 16, "%.3f", st->r2_cost), sp_f(v[1], 16, "%.3f", st->rho_cost),
            sp_f(v[2], 16, "%.3f", st->r2_time), sp_f(v[3], 16, "%.3f", st->rho_time),
            sp_f(v[4], 16, "%.1f", 100 * st->regret), sp_f(v[5], 16, "%.0f", st->percentile),
            sp_f(v[6], 16, "%.2f", st->speedup));
    if (k->paper_row >= 0)
      fprintf(out, " | %8.3f %8.2f\n", sp_cmp_paper[k->paper_row].r2,
              sp_cmp_paper[k->paper_row].speedup);
    else
      fputs(" |\n", out);
  }
  sp_cmp_summary s = sp_summarize(c);
  char v[12][16];
  fprintf(out, "  %-40s %4d %7s %7s %7s %7s %8s %6s %8s | %8s %8s\n", "median (paper: all 8 rows)", s.ok,
          sp_f(v[0], 16, "%.3f", s.r2_cost), sp_f(v[1], 16, "%.3f", s.rho_cost),
          sp_f(v[2], 16, "%.3f", s.r2_time), sp_f(v[3], 16, "%.3f", s.rho_time),
          sp_f(v[4], 16, "%.1f", 100 * s.regret), "", sp_f(v[6], 16, "%.2f", s.speedup),
          sp_f(v[7], 16, "%.3f", sp_paper_median(offsetof(sp_cmp_paper_row, r2))),
          sp_f(v[8], 16, "%.2f", sp_paper_median(offsetof(sp_cmp_paper_row, speedup))));
  fprintf(out,
          "\nSummary over %d kernels (%d with candidates measured ok): %d candidates ok, %d not ok",
          s.kernels, s.with_stats, s.ok, s.failed);
  sp_text_status_counts(out, c->kernels, c->nkernels);
  fprintf(out, ", %d not measured; %d wrong results\n", s.unmeasured, s.wrong);
  fprintf(out,
          "  model's pick is the measured best in %d kernels, within 10 %% of it in %d; median "
          "regret %s %%\n",
          s.picked_best, s.within_10pct, sp_f(v[0], 16, "%.1f", 100 * s.regret));
  fprintf(out,
          "  speedup over the compiler default: median %sx, geometric mean %sx; faster in %d, "
          "slower in %d of %d kernels\n",
          sp_f(v[0], 16, "%.2f", s.speedup), sp_f(v[1], 16, "%.2f", s.geo_speedup), s.faster,
          s.slower, s.speedup_n);
  fprintf(out,
          "  median over kernels: L1 hit error %s points, L2 hit error %s points, DRAM bytes "
          "|error| %s %%\n",
          sp_f(v[0], 16, "%.1f", s.l1), sp_f(v[1], 16, "%.1f", s.l2),
          sp_f(v[2], 16, "%.1f", 100 * s.dram));
  sp_text_exactness(out, "load requests", &s.requests);
  sp_text_exactness(out, "load sectors", &s.sectors);
  sp_text_exactness(out, "L1 miss sectors", &s.l1_miss_sectors);
  sp_text_exactness(out, "L2 read sectors", &s.l2_sectors);
}

static void sp_render_text(FILE *out, const sp_cmp_data *c) {
  fprintf(out, "schedpredict compare: plan %s (model %s, schedpredict %s, %s)\n", c->plan_path,
          c->model_arch ? c->model_arch : "?", c->generator_version ? c->generator_version : "?",
          c->generator_date ? c->generator_date : "undated");
  for (int i = 0; i < c->nfiles; i++) {
    const sp_cmp_measured_file *f = &c->files[i];
    fprintf(out, "measured: %s (%s, shard %s, %s, %s time%s)\n", f->path,
            f->device ? f->device : "unknown device", f->shard ? f->shard : "?",
            f->backend ? f->backend : "?", f->statistic ? f->statistic : "?",
            f->l2_flushed ? ", L2 flushed" : "");
  }
  fputs("Measured hit rates are hit sectors / sectors; Hopper's raw lts__t_sector_op_read_hit_rate "
        "is shown as (raw) and is not comparable (DESIGN.md).\n",
        out);
  int *order = sp_kernel_order(c);
  if (!order) return;
  for (int o = 0; o < c->nkernels; o++) {
    const sp_cmp_kernel *k = &c->kernels[order[o]];
    fprintf(out, "\n== %s", k->id);
    if (k->file) fprintf(out, " (%s:%lld%s%s)", k->file, (long long)k->line,
                         k->function ? ", " : "", k->function ? k->function : "");
    fprintf(out, ": %d candidate%s in the plan", k->ncand, k->ncand == 1 ? "" : "s");
    if (k->space_size >= 0) fprintf(out, " of %lld", (long long)k->space_size);
    if (k->selection) fprintf(out, " (%s)", k->selection);
    fputs("\n", out);
    for (int j = 0; j < k->ncand; j++)
      if (k->cand[j].wrong_result)
        fprintf(out, "  BUG: candidate %lld computed a different result than the reference "
                "(max relative difference %g)\n", (long long)k->cand[j].id, k->cand[j].max_rel_diff);
    sp_text_stats(out, k);
    sp_text_candidates(out, k);
  }
  for (size_t i = 0; c->skipped && i < json_array_size(c->skipped); i++) {
    json_t *sj = json_array_get(c->skipped, i);
    const char *why = json_string_value(json_object_get(sj, "reason"));
    fprintf(out, "%s== %s: not in the plan: %s\n", i ? "" : "\n",
            json_string_value(json_object_get(sj, "id")), why ? why : "no reason given");
  }
  sp_text_table(out, c, order);
  free(order);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static json_t *sp_jnum(double x) {
  if (!isfinite(x)) return json_null();
  if (x == floor(x) && fabs(x) < 9e15) return json_integer((json_int_t)x);
  return json_real(x);
}

static json_t *sp_jstr(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *sp_jdims(const int64_t d[3]) {
  return json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

static json_t *sp_jexact(const sp_cmp_exactness *e) {
  return json_pack("{s:i,s:i,s:i,s:o}", "n", e->n, "exact", e->exact, "within_1pct",
                   e->within_1pct, "worst_rel_error", sp_jnum(e->worst_rel));
}

static json_t *sp_jcandidate(const sp_cmp_kernel *k, int i) {
  const sp_cmp_candidate *c = &k->cand[i];
  json_t *o = json_object();
  json_object_set_new(o, "id", json_integer(c->id));
  json_object_set_new(o, "model_rank", json_integer(c->model_rank));
  json_object_set_new(o, "pattern", sp_jstr(c->pattern));
  json_object_set_new(o, "cuda_mapping", sp_jstr(c->cuda_mapping));
  json_object_set_new(o, "openacc", sp_jstr(c->openacc));
  json_object_set_new(o, "block", sp_jdims(c->block));
  json_object_set_new(o, "grid", sp_jdims(c->grid));
  json_object_set_new(o, "compiler_default", json_boolean(c->compiler_default));
  json_object_set_new(o, "chosen", json_boolean(i == k->st.chosen));
  json_object_set_new(o, "measured_best", json_boolean(i == k->st.best));
  json_object_set_new(o, "status", sp_jstr(c->measured_file ? c->status : "not_measured"));
  json_object_set_new(o, "message", sp_jstr(c->message));
  json_object_set_new(o, "in_statistics", json_boolean(c->ok));
  json_object_set_new(o, "wrong_result", json_boolean(c->wrong_result));
  json_object_set_new(o, "measured_file", sp_jstr(c->measured_file));
  json_object_set_new(o, "sampled", json_boolean(c->sampled));
  json_object_set_new(o, "cost_xu", sp_jnum(c->cost_xu));
  json_t *fields = json_object();
  for (int f = 0; f < SP_CMP_NFIELDS; f++) {
    const sp_cmp_field_info *fi = &sp_cmp_fields[f];
    json_t *e = json_object();
    json_object_set_new(e, "nsight", json_string(fi->nsight));
    json_object_set_new(e, "nvprof", sp_jstr(fi->nvprof));
    json_object_set_new(e, "modeled", sp_jnum(c->model[f]));
    json_object_set_new(e, "measured", sp_jnum(c->meas[f]));
    if (fi->is_rate)
      json_object_set_new(e, "error_points", sp_jnum(c->model[f] - c->meas[f]));
    else if (!isnan(c->model[f]) && !isnan(c->meas[f]))
      json_object_set_new(e, "rel_error",
                          sp_jnum(c->meas[f] > 0 ? c->model[f] / c->meas[f] - 1
                                                 : (c->model[f] == 0 ? 0 : INFINITY)));
    else
      json_object_set_new(e, "rel_error", json_null());
    if (f == SP_CMP_L1_HIT_PCT)
      json_object_set_new(e, "measured_raw", sp_jnum(c->l1_hit_raw_pct));
    if (f == SP_CMP_L2_HIT_PCT)
      json_object_set_new(e, "measured_raw", sp_jnum(c->l2_hit_raw_pct));
    if (f == SP_CMP_TIME_US) {
      json_object_set_new(e, "measured_min", sp_jnum(c->time_min_us));
      json_object_set_new(e, "measured_max", sp_jnum(c->time_max_us));
    }
    json_object_set_new(fields, fi->key, e);
  }
  json_object_set_new(o, "counters", fields);
  json_object_set_new(o, "achieved_occupancy", sp_jnum(c->occupancy_pct));
  json_object_set_new(o, "registers", c->registers >= 0 ? json_integer(c->registers) : json_null());
  json_object_set_new(o, "register_limited", json_boolean(c->register_limited));
  json_object_set_new(o, "result_equal", sp_jstr(c->result_equal));
  json_object_set_new(o, "max_rel_diff", sp_jnum(c->max_rel_diff));
  return o;
}

static json_t *sp_jstats(const sp_cmp_kernel *k) {
  const sp_cmp_kernel_stats *st = &k->st;
  json_t *o = json_object();
  json_object_set_new(o, "n_ok", json_integer(st->n_ok));
  json_object_set_new(o, "n_not_ok", json_integer(st->n_failed));
  json_object_set_new(o, "n_not_measured", json_integer(st->n_unmeasured));
  json_object_set_new(o, "r2_cost_vs_time", sp_jnum(st->r2_cost));
  json_object_set_new(o, "r2_log_cost_vs_log_time", sp_jnum(st->r2_log_cost));
  json_object_set_new(o, "spearman_cost_vs_time", sp_jnum(st->rho_cost));
  json_object_set_new(o, "r2_modeled_time_vs_time", sp_jnum(st->r2_time));
  json_object_set_new(o, "spearman_modeled_time_vs_time", sp_jnum(st->rho_time));
  json_object_set_new(o, "chosen", st->chosen >= 0 ? json_integer(k->cand[st->chosen].id) : json_null());
  json_object_set_new(o, "chosen_model_rank",
                      st->chosen >= 0 ? json_integer(k->cand[st->chosen].model_rank) : json_null());
  json_object_set_new(o, "measured_best", st->best >= 0 ? json_integer(k->cand[st->best].id) : json_null());
  json_object_set_new(o, "compiler_default",
                      st->deflt >= 0 ? json_integer(k->cand[st->deflt].id) : json_null());
  json_object_set_new(o, "chosen_measured_rank",
                      st->chosen >= 0 ? json_integer(st->chosen_measured_rank) : json_null());
  json_object_set_new(o, "regret", sp_jnum(st->regret));
  json_object_set_new(o, "percentile", sp_jnum(st->percentile));
  json_object_set_new(o, "speedup_over_default", sp_jnum(st->speedup));
  json_object_set_new(o, "speedup_over_default_predicted", sp_jnum(st->speedup_model));
  json_object_set_new(o, "l1_hit_mae_points", sp_jnum(st->l1_mae_pp));
  json_object_set_new(o, "l2_hit_mae_points", sp_jnum(st->l2_mae_pp));
  json_object_set_new(o, "l2_hit_raw_mae_points", sp_jnum(st->l2_raw_mae_pp));
  json_object_set_new(o, "dram_median_abs_rel_error", sp_jnum(st->dram_median_abs_rel));
  json_object_set_new(o, "dram_worst_rel_error", sp_jnum(st->dram_worst_rel));
  json_object_set_new(o, "load_requests", sp_jexact(&st->requests));
  json_object_set_new(o, "load_sectors", sp_jexact(&st->sectors));
  json_object_set_new(o, "l1_miss_sectors", sp_jexact(&st->l1_miss_sectors));
  json_object_set_new(o, "l2_read_sectors", sp_jexact(&st->l2_sectors));
  json_object_set_new(o, "register_limited", json_integer(st->n_register_limited));
  json_object_set_new(o, "register_limited_time_ratio", sp_jnum(st->limited_time_ratio));
  json_object_set_new(o, "others_time_ratio", sp_jnum(st->others_time_ratio));
  return o;
}

static char *sp_render_json(const sp_cmp_data *c) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", json_string(SP_CMP_SCHEMA));
  json_object_set_new(root, "schema_version", json_integer(SP_CMP_SCHEMA_VERSION));
  json_object_set_new(root, "plan", json_pack("{s:s,s:o,s:o}", "path", c->plan_path, "model_arch",
                                               sp_jstr(c->model_arch), "generator_version",
                                               sp_jstr(c->generator_version)));
  json_t *files = json_array();
  for (int i = 0; i < c->nfiles; i++) {
    const sp_cmp_measured_file *f = &c->files[i];
    json_array_append_new(files, json_pack("{s:s,s:o,s:o,s:o,s:o,s:b}", "path", f->path, "device",
                                           sp_jstr(f->device), "shard", sp_jstr(f->shard),
                                           "backend", sp_jstr(f->backend), "statistic",
                                           sp_jstr(f->statistic), "l2_flushed", f->l2_flushed));
  }
  json_object_set_new(root, "measurements", files);
  int *order = sp_kernel_order(c);
  json_t *ks = json_array();
  for (int o = 0; order && o < c->nkernels; o++) {
    const sp_cmp_kernel *k = &c->kernels[order[o]];
    json_t *kj = json_object();
    json_object_set_new(kj, "id", json_string(k->id));
    json_object_set_new(kj, "file", sp_jstr(k->file));
    json_object_set_new(kj, "line", json_integer(k->line));
    json_object_set_new(kj, "function", sp_jstr(k->function));
    json_object_set_new(kj, "selection", sp_jstr(k->selection));
    json_object_set_new(kj, "space_size", k->space_size >= 0 ? json_integer(k->space_size) : json_null());
    if (k->paper_row >= 0)
      json_object_set_new(kj, "dissertation",
                          json_pack("{s:s,s:f,s:f}", "benchmark", sp_cmp_paper[k->paper_row].title,
                                    "r2", sp_cmp_paper[k->paper_row].r2, "speedup",
                                    sp_cmp_paper[k->paper_row].speedup));
    else
      json_object_set_new(kj, "dissertation", json_null());
    json_object_set_new(kj, "stats", sp_jstats(k));
    json_t *cands = json_array();
    for (int i = 0; i < k->ncand; i++) json_array_append_new(cands, sp_jcandidate(k, i));
    json_object_set_new(kj, "candidates", cands);
    json_array_append_new(ks, kj);
  }
  free(order);
  json_object_set_new(root, "kernels", ks);
  json_object_set_new(root, "skipped", c->skipped ? json_incref(c->skipped) : json_array());
  sp_cmp_summary s = sp_summarize(c);
  json_t *sum = json_object();
  json_object_set_new(sum, "kernels", json_integer(s.kernels));
  json_object_set_new(sum, "kernels_with_ok_candidates", json_integer(s.with_stats));
  json_object_set_new(sum, "candidates_ok", json_integer(s.ok));
  json_object_set_new(sum, "candidates_not_ok", json_integer(s.failed));
  json_object_set_new(sum, "candidates_not_measured", json_integer(s.unmeasured));
  json_object_set_new(sum, "wrong_results", json_integer(s.wrong));
  json_object_set_new(sum, "median_r2_cost_vs_time", sp_jnum(s.r2_cost));
  json_object_set_new(sum, "median_spearman_cost_vs_time", sp_jnum(s.rho_cost));
  json_object_set_new(sum, "median_r2_modeled_time_vs_time", sp_jnum(s.r2_time));
  json_object_set_new(sum, "median_spearman_modeled_time_vs_time", sp_jnum(s.rho_time));
  json_object_set_new(sum, "median_regret", sp_jnum(s.regret));
  json_object_set_new(sum, "kernels_pick_is_best", json_integer(s.picked_best));
  json_object_set_new(sum, "kernels_regret_within_10pct", json_integer(s.within_10pct));
  json_object_set_new(sum, "median_speedup_over_default", sp_jnum(s.speedup));
  json_object_set_new(sum, "geomean_speedup_over_default", sp_jnum(s.geo_speedup));
  json_object_set_new(sum, "kernels_faster_than_default", json_integer(s.faster));
  json_object_set_new(sum, "kernels_slower_than_default", json_integer(s.slower));
  json_object_set_new(sum, "median_l1_hit_mae_points", sp_jnum(s.l1));
  json_object_set_new(sum, "median_l2_hit_mae_points", sp_jnum(s.l2));
  json_object_set_new(sum, "median_dram_abs_rel_error", sp_jnum(s.dram));
  json_object_set_new(sum, "load_requests", sp_jexact(&s.requests));
  json_object_set_new(sum, "load_sectors", sp_jexact(&s.sectors));
  json_object_set_new(sum, "l1_miss_sectors", sp_jexact(&s.l1_miss_sectors));
  json_object_set_new(sum, "l2_read_sectors", sp_jexact(&s.l2_sectors));
  json_object_set_new(root, "summary", sum);
  char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!text) return NULL;
  size_t l = strlen(text);
  char *t = realloc(text, l + 2);
  if (!t) return text;
  memcpy(t + l, "\n", 2);
  return t;
}

/* ---- CSV ------------------------------------------------------------------------------------- */

/* One CSV row: every field but the first is preceded by a comma. */
typedef struct sp_csv {
  FILE *out;
  bool started;
} sp_csv;

static void sp_csv_sep(sp_csv *w) {
  if (w->started) fputc(',', w->out);
  w->started = true;
}

static void sp_csv_str(sp_csv *w, const char *s) {
  sp_csv_sep(w);
  FILE *out = w->out;
  if (!s) return;
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void sp_csv_num(sp_csv *w, double x) {
  sp_csv_sep(w);
  FILE *out = w->out;
  if (isnan(x)) return;
  if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", out);
  else if (x == floor(x) && fabs(x) < 9e15) fprintf(out, "%.0f", x);
  else fprintf(out, "%.10g", x);
}

static void sp_render_csv(FILE *out, const sp_cmp_data *c) {
  fputs("kernel,candidate,model_rank,chosen,measured_best,compiler_default,pattern,cuda_mapping,"
        "openacc,block,grid,status,message,measured_file",
        out);
  for (int f = 0; f < SP_CMP_NFIELDS; f++)
    fprintf(out, ",%s_modeled,%s_measured", sp_cmp_fields[f].key, sp_cmp_fields[f].key);
  fputs(",global_hit_rate_raw_measured,l2_tex_read_hit_rate_raw_measured,cost_xu,time_min_us,"
        "time_max_us,achieved_occupancy,registers,register_limited,sampled,result_equal,max_rel_diff\n",
        out);
  int *order = sp_kernel_order(c);
  for (int o = 0; order && o < c->nkernels; o++) {
    const sp_cmp_kernel *k = &c->kernels[order[o]];
    for (int i = 0; i < k->ncand; i++) {
      const sp_cmp_candidate *d = &k->cand[i];
      char blk[64], grd[64];
      snprintf(blk, sizeof blk, "%lldx%lldx%lld", (long long)d->block[0], (long long)d->block[1],
               (long long)d->block[2]);
      snprintf(grd, sizeof grd, "%lldx%lldx%lld", (long long)d->grid[0], (long long)d->grid[1],
               (long long)d->grid[2]);
      sp_csv w = {out, false};
      sp_csv_str(&w, k->id);
      sp_csv_num(&w, (double)d->id);
      sp_csv_num(&w, d->model_rank);
      sp_csv_num(&w, i == k->st.chosen);
      sp_csv_num(&w, i == k->st.best);
      sp_csv_num(&w, d->compiler_default);
      sp_csv_str(&w, d->pattern);
      sp_csv_str(&w, d->cuda_mapping);
      sp_csv_str(&w, d->openacc);
      sp_csv_str(&w, blk);
      sp_csv_str(&w, grd);
      sp_csv_str(&w, d->measured_file ? d->status : "not_measured");
      sp_csv_str(&w, d->message);
      sp_csv_str(&w, d->measured_file);
      for (int f = 0; f < SP_CMP_NFIELDS; f++) {
        sp_csv_num(&w, d->model[f]);
        sp_csv_num(&w, d->meas[f]);
      }
      sp_csv_num(&w, d->l1_hit_raw_pct);
      sp_csv_num(&w, d->l2_hit_raw_pct);
      sp_csv_num(&w, d->cost_xu);
      sp_csv_num(&w, d->time_min_us);
      sp_csv_num(&w, d->time_max_us);
      sp_csv_num(&w, d->occupancy_pct);
      sp_csv_num(&w, d->registers >= 0 ? (double)d->registers : NAN);
      sp_csv_num(&w, d->register_limited);
      sp_csv_num(&w, d->sampled);
      sp_csv_str(&w, d->result_equal);
      sp_csv_num(&w, d->max_rel_diff);
      fputc('\n', out);
    }
  }
  free(order);
}

char *sp_cmp_render(const sp_cmp_data *c, sp_cmp_format format) {
  if (format == SP_CMP_JSON) return sp_render_json(c);
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return NULL;
  if (format == SP_CMP_CSV) sp_render_csv(mem, c);
  else sp_render_text(mem, c);
  if (fclose(mem) != 0) {
    free(text);
    return NULL;
  }
  return text;
}
