/* `schedpredict compare`: statistics of the model against the measurements, and the command. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_statistics_double.h>

#include "schedpredict/compare.h"

const sp_cmp_paper_row sp_cmp_paper[8] = {
    {"xreuse", "x-reuse", 0.927, 1.0},     {"yreuse", "y-reuse", 0.683, 2.74},
    {"matmul", "Matrix Multiplication", 0.913, 1.03},
    {"jacobi", "Jacobi", 0.998, 1.1},      {"laplacian", "Laplacian", 0.999, 1.05},
    {"divergence", "Divergence", 0.999, 0.96},
    {"transpose", "Matrix Transpose", 0.943, 1.37},
    {"himeno", "Himeno", 0.994, 1.09},
};

/* The file stem of a kernel ("examples/x_reuse.c" or id "x-reuse.c:12" -> "xreuse"). */
static int sp_paper_row(const sp_cmp_kernel *k) {
  const char *s = k->file ? k->file : k->id;
  const char *slash = strrchr(s, '/');
  if (slash) s = slash + 1;
  char stem[64];
  size_t n = 0;
  for (; *s && *s != '.' && *s != ':' && n + 1 < sizeof stem; s++)
    if (isalnum((unsigned char)*s)) stem[n++] = (char)tolower((unsigned char)*s);
  stem[n] = 0;
  for (int i = 0; i < 8; i++)
    if (strcmp(stem, sp_cmp_paper[i].name) == 0) return i;
  return -1;
}

/* Pearson r^2 of (x, y), NaN with fewer than 3 points or no spread in either. */
static double sp_r2(const double *x, const double *y, size_t n) {
  if (n < 3 || gsl_stats_variance(x, 1, n) <= 0 || gsl_stats_variance(y, 1, n) <= 0) return NAN;
  double r = gsl_stats_correlation(x, 1, y, 1, n);
  return r * r;
}

static double sp_rho(const double *x, const double *y, size_t n, double *work) {
  if (n < 3 || gsl_stats_variance(x, 1, n) <= 0 || gsl_stats_variance(y, 1, n) <= 0) return NAN;
  return gsl_stats_spearman(x, 1, y, 1, n, work);
}

/* (modeled - measured) / measured; 0 for 0 vs 0, infinite for something vs 0. */
static double sp_rel_error(double model, double meas) {
  if (meas > 0) return (model - meas) / meas;
  return model == meas ? 0.0 : INFINITY;
}

static int sp_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sp_cmp_median(double *v, size_t n) {
  if (!n) return NAN;
  qsort(v, n, sizeof *v, sp_cmp_double);
  return gsl_stats_median_from_sorted_data(v, 1, n);
}

static sp_cmp_exactness sp_exactness(const sp_cmp_kernel *k, sp_cmp_field f) {
  sp_cmp_exactness e = {0, 0, 0, NAN};
  for (int i = 0; i < k->ncand; i++) {
    const sp_cmp_candidate *c = &k->cand[i];
    if (!c->ok || isnan(c->model[f]) || isnan(c->meas[f])) continue;
    double rel = sp_rel_error(c->model[f], c->meas[f]);
    e.n++;
    e.exact += rel == 0;
    e.within_1pct += fabs(rel) <= 0.01;
    if (isnan(e.worst_rel) || fabs(rel) > fabs(e.worst_rel)) e.worst_rel = rel;
  }
  return e;
}

/* Mean |modeled - measured| of a percent field over the ok candidates that have both. */
static double sp_mae(const sp_cmp_kernel *k, sp_cmp_field f, bool raw_l2) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < k->ncand; i++) {
    const sp_cmp_candidate *c = &k->cand[i];
    double meas = raw_l2 ? c->l2_hit_raw_pct : c->meas[f];
    if (!c->ok || isnan(c->model[f]) || isnan(meas)) continue;
    sum += fabs(c->model[f] - meas);
    n++;
  }
  return n ? sum / n : NAN;
}

/* Marks the candidates whose measured registers let fewer of their blocks on an SM than the model
 * assumed, and the median measured / predicted time of them and of the others (arch NULL: the
 * plan's model_arch is no description here, nothing is marked). */
static void sp_register_limits(sp_cmp_kernel *k, const sp_arch *arch) {
  sp_cmp_kernel_stats *st = &k->st;
  size_t n = (size_t)(k->ncand ? k->ncand : 1);
  double *lim = malloc(n * sizeof *lim), *other = malloc(n * sizeof *other);
  size_t nl = 0, no = 0;
  for (int i = 0; lim && other && i < k->ncand; i++) {
    sp_cmp_candidate *c = &k->cand[i];
    c->register_limited = false;
    if (!c->ok) continue;
    if (arch && c->registers > 0 && c->registers <= arch->max_registers_per_thread) {
      int threads = (int)(c->block[0] * c->block[1] * c->block[2]);
      int fit = sp_arch_active_blocks_per_sm(arch, threads, (int)c->registers, 0);
      int assumed = sp_arch_active_blocks_per_sm(arch, threads, (int)k->model_registers, 0);
      c->register_limited = fit < assumed &&
                            c->grid[0] * c->grid[1] * c->grid[2] > (int64_t)fit * arch->sm_count;
    }
    double r = c->meas[SP_CMP_TIME_US] / c->model[SP_CMP_TIME_US];
    if (r > 0 && isfinite(r)) {
      if (c->register_limited) lim[nl++] = r;
      else other[no++] = r;
    }
    st->n_register_limited += c->register_limited;
  }
  st->limited_time_ratio = nl ? sp_cmp_median(lim, nl) : NAN;
  st->others_time_ratio = no ? sp_cmp_median(other, no) : NAN;
  free(lim);
  free(other);
}

static void sp_analyze_kernel(sp_cmp_kernel *k, const sp_arch *arch) {
  sp_cmp_kernel_stats *st = &k->st;
  memset(st, 0, sizeof *st);
  st->chosen = st->best = st->deflt = -1;
  size_t n = (size_t)(k->ncand ? k->ncand : 1);
  double *cost = malloc(n * sizeof *cost), *pred = malloc(n * sizeof *pred),
         *meas = malloc(n * sizeof *meas), *lc = malloc(n * sizeof *lc),
         *lt = malloc(n * sizeof *lt), *work = malloc(2 * n * sizeof *work),
         *dram = malloc(n * sizeof *dram);
  size_t m = 0, nlog = 0, ndram = 0;
  for (int i = 0; i < k->ncand; i++) {
    const sp_cmp_candidate *c = &k->cand[i];
    if (c->compiler_default && st->deflt < 0) st->deflt = i;
    if (!c->measured_file) {
      st->n_unmeasured++;
      continue;
    }
    if (!c->ok) {
      st->n_failed++;
      continue;
    }
    st->n_ok++;
    if (!cost || !pred || !meas || !lc || !lt || !work || !dram) continue;
    double t = c->meas[SP_CMP_TIME_US];
    cost[m] = c->cost_xu;
    pred[m] = c->model[SP_CMP_TIME_US];
    meas[m++] = t;
    if (c->cost_xu > 0) {
      lc[nlog] = log(c->cost_xu);
      lt[nlog++] = log(t);
    }
    if (!isnan(c->meas[SP_CMP_DRAM_BYTES]) && !isnan(c->model[SP_CMP_DRAM_BYTES])) {
      double rel = sp_rel_error(c->model[SP_CMP_DRAM_BYTES], c->meas[SP_CMP_DRAM_BYTES]);
      dram[ndram++] = fabs(rel);
      if (ndram == 1 || fabs(rel) > fabs(st->dram_worst_rel)) st->dram_worst_rel = rel;
    }
    if (st->chosen < 0 || c->model_rank < k->cand[st->chosen].model_rank) st->chosen = i;
    if (st->best < 0 || t < k->cand[st->best].meas[SP_CMP_TIME_US] ||
        (t == k->cand[st->best].meas[SP_CMP_TIME_US] &&
         c->model_rank < k->cand[st->best].model_rank))
      st->best = i;
  }
  st->r2_cost = sp_r2(cost, meas, m);
  st->rho_cost = sp_rho(cost, meas, m, work);
  st->r2_time = sp_r2(pred, meas, m);
  st->rho_time = sp_rho(pred, meas, m, work);
  st->r2_log_cost = nlog == m ? sp_r2(lc, lt, nlog) : NAN;
  st->dram_median_abs_rel = sp_cmp_median(dram, ndram);
  if (!ndram) st->dram_worst_rel = NAN;
  st->regret = st->percentile = st->speedup = st->speedup_model = NAN;
  if (st->chosen >= 0) {
    const sp_cmp_candidate *ch = &k->cand[st->chosen];
    double tc = ch->meas[SP_CMP_TIME_US];
    int faster = 0, slower = 0;
    for (size_t i = 0; i < m; i++) {
      faster += meas[i] < tc;
      slower += meas[i] > tc;
    }
    st->chosen_measured_rank = 1 + faster;
    st->percentile = m > 1 ? 100.0 * slower / (double)(m - 1) : 100.0;
    st->regret = tc / k->cand[st->best].meas[SP_CMP_TIME_US] - 1.0;
    if (st->deflt >= 0) {
      const sp_cmp_candidate *d = &k->cand[st->deflt];
      if (d->ok) st->speedup = d->meas[SP_CMP_TIME_US] / tc;
      st->speedup_model = d->model[SP_CMP_TIME_US] / ch->model[SP_CMP_TIME_US];
    }
  }
  st->l1_mae_pp = sp_mae(k, SP_CMP_L1_HIT_PCT, false);
  st->l2_mae_pp = sp_mae(k, SP_CMP_L2_HIT_PCT, false);
  st->l2_raw_mae_pp = sp_mae(k, SP_CMP_L2_HIT_PCT, true);
  st->requests = sp_exactness(k, SP_CMP_LD_REQUESTS);
  st->sectors = sp_exactness(k, SP_CMP_LD_SECTORS);
  st->l1_miss_sectors = sp_exactness(k, SP_CMP_L1_MISS_SECTORS);
  st->l2_sectors = sp_exactness(k, SP_CMP_L2_SECTORS);
  sp_register_limits(k, arch);
  free(cost);
  free(pred);
  free(meas);
  free(lc);
  free(lt);
  free(work);
  free(dram);
}

void sp_cmp_analyze(sp_cmp_data *c) {
  c->n_wrong_result = 0;
  for (int i = 0; i < c->nkernels; i++) {
    sp_cmp_kernel *k = &c->kernels[i];
    k->paper_row = sp_paper_row(k);
    sp_analyze_kernel(k, c->arch_known ? &c->arch : NULL);
    for (int j = 0; j < k->ncand; j++) c->n_wrong_result += k->cand[j].wrong_result;
  }
}

static const char sp_cmp_usage[] =
    "usage: schedpredict compare [options] PLAN.json MEASURED.json [MORE-MEASURED.json...]\n"
    "\n"
    "Holds the model's predictions (a plan written by --emit-plan) against the GPU's\n"
    "measurements (schedvalidate's output; several files are shards of one plan, merged by\n"
    "kernel id and candidate id). Per candidate: every counter modeled vs measured (Nsight and\n"
    "nvprof names) and time. Per kernel: R^2 and Spearman rho of modeled cost and modeled time\n"
    "against measured time, the model's pick's regret against the measured best and its\n"
    "percentile, its speedup over the compiler default, hit-rate errors, DRAM error, how\n"
    "many request and sector counts are exact, and the candidates whose measured registers\n"
    "fit fewer of their blocks on an SM than the plan's model assumed (register_limited).\n"
    "Then a summary over all kernels beside the dissertation's Table 7.3.\n"
    "\n"
    "options:\n"
    "  --format text|json|csv  report format (default text; csv: one row per candidate)\n"
    "  --duration              measured time: gpu__time_duration.sum (the kernel alone), not\n"
    "                          the CUDA events' median, which also holds the launch's host side\n"
    "                          (4-7 us more for a kernel of a few microseconds)\n"
    "  -o FILE                 write the report to FILE atomically (an existing FILE is kept\n"
    "                          unless --force)\n"
    "  --force                 allow -o to replace an existing file\n"
    "  -q, --quiet             no notes on stderr\n"
    "  -h, --help              this text\n"
    "\n"
    "exit codes: 0 ok; 1 internal error; 2 bad command line; 3 a file is missing, unreadable,\n"
    "not JSON, or not a valid plan/measurement (the message names the file and the JSON path);\n"
    "5 no candidate was measured with status ok; 6 the report was written but a candidate\n"
    "computed a different result than the reference (a bug: please report it).\n";

static int sp_cmp_usage_error(const char *what, const char *arg) {
  fprintf(stderr, "schedpredict compare: error: %s%s\n(run 'schedpredict compare --help')\n",
          what, arg ? arg : "");
  return 2;
}

/* The SHA-256 of a file as 64 hex digits, from coreutils' sha256sum (as schedvalidate computes
 * it); false when it cannot be had. */
static bool sp_sha256_file(const char *path, char hex[65]) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return false;
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    execlp("sha256sum", "sha256sum", "--", path, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while (n < 64 && (k = read(fd[0], hex + n, 64 - n)) > 0) n += (size_t)k;
  close(fd[0]);
  int status;
  bool ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
            n == 64;
  hex[ok ? 64 : 0] = 0;
  return ok;
}

/* Measurements taken from another version of the plan may give the same ids to other schedules. */
static void sp_check_plan_hash(const sp_cmp_data *c) {
  char hex[65];
  bool have = false, tried = false;
  for (int i = 0; i < c->nfiles; i++) {
    const char *want = c->files[i].plan_sha256;
    if (!want || strspn(want, "0123456789abcdef") != 64) continue;
    if (!tried) have = sp_sha256_file(c->plan_path, hex), tried = true;
    if (have && strcmp(hex, want) != 0)
      fprintf(stderr,
              "%s: warning: plan.sha256: it was measured from another plan than %s (the "
              "candidate ids may name other schedules: emit the plan once and run that)\n",
              c->files[i].path, c->plan_path);
  }
}

/* Loud notes on stderr: the candidates that computed a wrong result, and missing shards. */
static void sp_cmp_warn(const sp_cmp_data *c, bool quiet) {
  int unmeasured = 0, ok = 0;
  for (int i = 0; i < c->nkernels; i++) {
    const sp_cmp_kernel *k = &c->kernels[i];
    unmeasured += k->st.n_unmeasured;
    ok += k->st.n_ok;
    for (int j = 0; j < k->ncand; j++)
      if (k->cand[j].wrong_result)
        fprintf(stderr,
                "%s: error: kernel %s candidate %lld (%s) computed a different result than the "
                "reference candidate %lld: a bug in code generation or in the schedule space; "
                "it is excluded from the statistics\n",
                k->cand[j].measured_file, k->id, (long long)k->cand[j].id,
                k->cand[j].cuda_mapping ? k->cand[j].cuda_mapping : "?",
                (long long)k->reference);
  }
  if (!quiet && unmeasured)
    fprintf(stderr,
            "schedpredict compare: note: %d candidate(s) of the plan have no measurement in the "
            "%d file(s) given (a shard missing?)\n",
            unmeasured, c->nfiles);
  if (!ok)
    fprintf(stderr, "schedpredict compare: error: no candidate was measured with status ok\n");
}

int sp_cmp_main(int argc, char **argv, sp_cmp_writer write_output) {
  sp_cmp_format format = SP_CMP_TEXT;
  const char *out = NULL;
  bool force = false, quiet = false, duration = false;
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  int nfiles = 0;
  if (!files) return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(sp_cmp_usage, stdout);
      free(files);
      return 0;
    } else if (strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) rc = sp_cmp_usage_error(a, " needs a value");
      else if (a[1] == 'o') out = argv[++i];
      else if (strcmp(argv[++i], "text") == 0) format = SP_CMP_TEXT;
      else if (strcmp(argv[i], "json") == 0) format = SP_CMP_JSON;
      else if (strcmp(argv[i], "csv") == 0) format = SP_CMP_CSV;
      else rc = sp_cmp_usage_error("--format takes text, json or csv, not ", argv[i]);
    } else if (strcmp(a, "--force") == 0) {
      force = true;
    } else if (strcmp(a, "--duration") == 0) {
      duration = true;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else if (a[0] == '-' && a[1]) {
      rc = sp_cmp_usage_error("unknown option ", a);
    } else {
      files[nfiles++] = a;
    }
    if (rc) {
      free(files);
      return rc;
    }
  }
  if (nfiles < 2) {
    free(files);
    return sp_cmp_usage_error("give a plan and at least one measurement file", NULL);
  }
  sp_cmp_data c;
  char err[1024];
  int rc = sp_cmp_load_plan(&c, files[0], err, sizeof err);
  for (int i = 1; i < nfiles && rc == 0; i++) rc = sp_cmp_add_measured(&c, files[i], err, sizeof err);
  if (rc == 0 && duration) rc = sp_cmp_time_from_duration(&c, err, sizeof err);
  if (rc) {
    fprintf(stderr, "%s\n", err);
    sp_cmp_free(&c);
    free(files);
    return 3;
  }
  sp_cmp_analyze(&c);
  sp_check_plan_hash(&c);
  sp_cmp_warn(&c, quiet);
  char *text = sp_cmp_render(&c, format);
  if (!text) rc = 1;
  else if (out) rc = write_output(out, force, text);
  else rc = fputs(text, stdout) < 0 ? 1 : 0;
  if (rc == 0) {
    int ok = 0;
    for (int i = 0; i < c.nkernels; i++) ok += c.kernels[i].st.n_ok;
    if (c.n_wrong_result) rc = SP_CMP_EXIT_WRONG_RESULT;
    else if (!ok) rc = SP_CMP_EXIT_NOTHING;
  }
  free(text);
  sp_cmp_free(&c);
  free(files);
  return rc;
}
