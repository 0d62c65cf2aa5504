/* Ranking speed and quality per nest: wall and CPU time of the ranking with the default (or
 * given) screening, and with --reference the regret of its pick against a ranking that refines
 * every candidate (the pick's refined time over the fastest refined time, both from the
 * reference; the pick is the plateau rule's, so up to SP_RANK_PLATEAU - 1 is the rule's choice).
 *
 *   bench_rank [--reference] [--screen-total N] [--screen-min N] [--budget N] [--threads N]
 *              [--unshared] [--uncounted]
 *              [--param NAME=VALUE]...
 *              [--try TOTAL,MIN[,COUNT,ROUNDS[,BUDGET]]]... FILE.c [-- CLANG-ARGS]
 *
 * Each --try ranks again with that screening (total instructions, per-candidate floor) and, if
 * given, that refinement (candidates per round, rounds, instructions per refined candidate), and
 * prints its own line, against the same reference. 0 keeps a default. --ref-file F keeps the reference's times in F.K (nest K):
 * read from there when present, written there when computed. --screen-dump F writes the default
 * ranking's candidates to F.K, one line each (bench/refine_rounds.py replays the refinement
 * rounds on them): index, block x y z, grid x y z, SMs used, resident warps per SM, screened
 * time and its partly-written-sectors part (seconds), refined (0/1), refined time and its part
 * (0 when not refined), in the refine_also subset (0/1), baseline (1 gcc, 2 nvc, 3 both, 0).
 * One line per nest; figures only, no verdicts (the reference ranking takes minutes for 3-D
 * nests: every candidate on the 150 k-instruction refinement sample).
 * lookups: the memory model's table lookups over all candidates (sp_rank_candidate's
 * model_lookups); lk/cpu_s and sec/cpu_s: those lookups and the sectors they answered for per
 * CPU second of the whole ranking (trace generation and the time model included, so below
 * what bench_memsys measures for the model alone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedpredict/advice.h"
#include "schedpredict/analyzer.h"
#include "schedpredict/arch.h"
#include "schedpredict/diag.h"
#include "schedpredict/rank.h"

static double now_s(clockid_t clk) {
  struct timespec t;
  clock_gettime(clk, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct expr_ctx {
  const sp_nest *nest;
} expr_ctx;

static bool expressible(const sp_schedule *s, void *ctx) {
  const expr_ctx *e = ctx;
  sp_adv_plan plan;
  return sp_adv_express(e->nest, s, SP_ADV_GCC, &plan, NULL, 0);
}

static int rank_timed(const sp_nest *n, const sp_arch *arch, const sp_rank_options *o,
                      sp_rank_result *r, double *wall, double *cpu) {
  char err[256];
  double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
  int rc = sp_rank_nest(n, arch, o, r, err, sizeof err);
  *wall = now_s(CLOCK_MONOTONIC) - w0;
  *cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  if (rc != 0) fprintf(stderr, "bench_rank: %s:%u: %s\n", n->loc.file, n->loc.line, err);
  return rc;
}

/* --screen-dump's file for nest k (the format is in the comment at the top). */
static int dump_candidates(const char *path, int k, const sp_rank_result *r, expr_ctx *ec) {
  char name[1024];
  snprintf(name, sizeof name, "%s.%d", path, k);
  FILE *f = fopen(name, "w");
  if (!f) return -1;
  for (int i = 0; i < r->n; i++) {
    const sp_rank_candidate *c = &r->candidates[i];
    const sp_schedule *s = &c->schedule;
    fprintf(f, "%d %d %d %d %lld %lld %lld %d %d %.9g %.9g %d %.9g %.9g %d %d\n", i, s->block[0],
            s->block[1], s->block[2], (long long)s->grid[0], (long long)s->grid[1],
            (long long)s->grid[2], c->time.sms_used, c->time.active_warps_per_sm, sp_rank_screened_s(c),
            sp_rank_screened_partial_s(c), c->refined, c->refined ? c->time.total_s : 0,
            c->refined ? c->time.partial_s : 0, expressible(s, ec),
            (i == r->default_gcc) + 2 * (i == r->default_nvc));
  }
  return fclose(f) == 0 ? 0 : -1;
}

static long parse_long(const char *v, const char *opt) {
  char *end;
  long x = strtol(v, &end, 10);
  if (*v == 0 || *end != 0 || x < 0) {
    fprintf(stderr, "bench_rank: %s wants a whole number, not '%s'\n", opt, v);
    exit(2);
  }
  return x;
}

int main(int argc, char **argv) {
  sp_rank_options o;
  memset(&o, 0, sizeof o);
  o.l1_variant = SP_CM_L1_BASE;
  o.space.allow_interchange = true;
  o.space.gcc_default = true;
  o.space.gang_caps_absolute = true;
  bool reference = false;
  const char *dump_file = NULL;
  const char *file = NULL, *ref_file = NULL;
  enum { MAX_TRIES = 16, MAX_PARAMS = 16 };
  sp_param params[MAX_PARAMS];
  int nparams = 0;
  long tries[MAX_TRIES][5];
  int ntries = 0;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--reference") == 0) reference = true;
    else if (strcmp(a, "--unshared") == 0) o.unshared_samples = true;
    else if (strcmp(a, "--uncounted") == 0) o.uncounted_l1 = true;
    else if (i + 1 < argc && strcmp(a, "--screen-total") == 0) o.screen_total = parse_long(argv[++i], a);
    else if (i + 1 < argc && strcmp(a, "--screen-min") == 0) o.screen_min = parse_long(argv[++i], a);
    else if (i + 1 < argc && strcmp(a, "--budget") == 0) o.sample_budget = parse_long(argv[++i], a);
    else if (i + 1 < argc && strcmp(a, "--threads") == 0) o.threads = (int)parse_long(argv[++i], a);
    else if (i + 1 < argc && strcmp(a, "--ref-file") == 0) ref_file = argv[++i];
    else if (i + 1 < argc && strcmp(a, "--screen-dump") == 0) dump_file = argv[++i];
    else if (i + 1 < argc && strcmp(a, "--param") == 0 && nparams < MAX_PARAMS) {
      const char *text = argv[++i], *eq = strchr(text, '=');
      if (!eq || eq == text) {
        fprintf(stderr, "bench_rank: --param wants NAME=VALUE, not '%s'\n", text);
        return 2;
      }
      params[nparams].name = strndup(text, (size_t)(eq - text));
      params[nparams++].value = parse_long(eq + 1, a);
    }
    else if (i + 1 < argc && strcmp(a, "--try") == 0 && ntries < MAX_TRIES) {
      long v[5] = {0, 0, 0, 0, 0};
      char *text = strdup(argv[++i]), *save = NULL;
      int nv = 0;
      for (char *f = strtok_r(text, ",", &save); f && nv < 5; f = strtok_r(NULL, ",", &save))
        v[nv++] = parse_long(f, a);
      free(text);
      if (nv != 2 && nv != 4 && nv != 5) {
        fprintf(stderr, "bench_rank: --try wants TOTAL,MIN[,COUNT,ROUNDS[,BUDGET]], not '%s'\n",
                argv[i]);
        return 2;
      }
      memcpy(tries[ntries++], v, sizeof v);
    }
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "usage: bench_rank [--reference] [--screen-total N] [--screen-min N] "
                      "[--budget N] [--threads N] [--unshared] [--uncounted] [--param NAME=VALUE] [--ref-file F] [--screen-dump F]\n"
                      "       [--try TOTAL,MIN[,COUNT,ROUNDS[,BUDGET]]]... FILE.c [-- ARGS]\n");
      return 2;
    }
  }
  if (!file) {
    fprintf(stderr, "bench_rank: no input file\n");
    return 2;
  }
  sp_analyzer_options ao;
  memset(&ao, 0, sizeof ao);
  ao.params = params;
  ao.nparams = nparams;
  if (i < argc) {
    ao.clang_args = (const char *const *)argv + i + 1;
    ao.nclang_args = argc - i - 1;
  }
  sp_arch arch;
  char err[512];
  if (sp_arch_load("h100", &arch, err, sizeof err) != 0) {
    fprintf(stderr, "bench_rank: %s\n", err);
    return 1;
  }
  sp_diag diag;
  sp_diag_init(&diag, stderr);
  diag.quiet = true;
  sp_program prog;
  memset(&prog, 0, sizeof prog);
  int rc = sp_analyze(&file, 1, &ao, &diag, &prog);
  if (rc != SP_EXIT_OK) {
    sp_program_free(&prog);
    return rc;
  }
  printf("%-28s %6s %7s %6s %8s %8s %-34s %10s %9s %9s %9s", "nest", "cands", "refined", "shared", "wall_s",
         "cpu_s", "pick", "pred_us", "lookups", "lk/cpu_s", "sec/cpu_s");
  if (reference) printf(" %8s %8s %7s", "ref_wall", "regret%", "top3");
  printf("\n");
  for (int k = 0; k < prog.nnests && rc == 0; k++) {
    const sp_nest *n = &prog.nests[k];
    expr_ctx ec = {n};
    o.refine_also = expressible;
    o.refine_also_ctx = &ec;
    char where[64];
    const char *slash = strrchr(n->loc.file, '/');
    snprintf(where, sizeof where, "%s:%u", slash ? slash + 1 : n->loc.file, n->loc.line);
    double *ref = NULL; /* the reference's refined time per candidate, in space order */
    int nref = 0;
    double rw = 0, rcpu;
    char rpath[1024];
    snprintf(rpath, sizeof rpath, "%s.%d", ref_file ? ref_file : "", k);
    FILE *rf = reference && ref_file ? fopen(rpath, "r") : NULL;
    if (rf) {
      double x;
      while (fscanf(rf, "%lf", &x) == 1) {
        double *bigger = realloc(ref, (size_t)(nref + 1) * sizeof *ref);
        if (!bigger) break;
        ref = bigger;
        ref[nref++] = x;
      }
      fclose(rf);
    } else if (reference) {
      sp_rank_options ro = o;
      ro.screen_total = INT64_C(1) << 40; /* every candidate on the refinement sample */
      sp_rank_result all;
      if (rank_timed(n, &arch, &ro, &all, &rw, &rcpu) != 0) {
        rc = 1;
        break;
      }
      nref = all.n;
      ref = malloc((size_t)nref * sizeof *ref);
      FILE *wf = ref_file ? fopen(rpath, "w") : NULL;
      for (int c = 0; ref && c < nref; c++) {
        ref[c] = all.candidates[c].time.total_s;
        if (wf) fprintf(wf, "%.17g\n", ref[c]);
      }
      if (wf) fclose(wf);
      sp_rank_result_free(&all);
    }
    for (int t = -1; t < ntries && rc == 0; t++) {
      sp_rank_options to = o;
      if (t >= 0) {
        to.screen_total = tries[t][0];
        to.screen_min = tries[t][1];
        to.refine_count = (int)tries[t][2];
        to.refine_rounds = (int)tries[t][3];
        if (tries[t][4] > 0) to.sample_budget = tries[t][4];
      }
      sp_rank_result r;
      double wall, cpu;
      if (rank_timed(n, &arch, &to, &r, &wall, &cpu) != 0) {
        rc = 1;
        break;
      }
      int refined = 0;
      double lookups = 0, sectors = 0;
      for (int c = 0; c < r.n; c++) {
        refined += r.candidates[c].refined;
        lookups += (double)r.candidates[c].model_lookups;
        sectors += (double)r.candidates[c].model_sectors;
      }
      if (t < 0 && dump_file && dump_candidates(dump_file, k, &r, &ec) != 0) {
        fprintf(stderr, "bench_rank: cannot write %s.%d\n", dump_file, k);
        rc = 1;
      }
      const sp_rank_candidate *pick = &r.candidates[r.order[0]];
      char label[96];
      if (t < 0) snprintf(label, sizeof label, "%s", where);
      else snprintf(label, sizeof label, "  try %ld,%ld,%ld,%ld,%ld", tries[t][0], tries[t][1],
                    tries[t][2], tries[t][3], tries[t][4]);
      printf("%-28s %6d %7d %6d %8.2f %8.2f %-34s %10.1f %8.1fM %8.1fM %8.1fM", label, r.n, refined,
             r.samples_shared, wall, cpu, pick->schedule.name, 1e6 * pick->time.total_s, lookups / 1e6,
             cpu > 0 ? lookups / cpu / 1e6 : 0, cpu > 0 ? sectors / cpu / 1e6 : 0);
      if (reference && ref && nref == r.n) {
        int best = 0; /* the fastest, before the plateau rule */
        for (int c = 1; c < nref; c++)
          if (ref[c] < ref[best]) best = c;
        int top3 = 0; /* ours among the reference's 3 fastest */
        for (int a = 0; a < 3 && a < r.n; a++) {
          int faster = 0;
          for (int c = 0; c < nref; c++) faster += ref[c] < ref[r.order[a]];
          top3 += faster < 3;
        }
        printf(" %8.1f %8.2f %5d/3", rw, 100 * (ref[r.order[0]] / ref[best] - 1), top3);
      } else if (reference) {
        printf(" (reference of %d candidates does not fit)", nref);
      }
      printf("\n");
      fflush(stdout);
      sp_rank_result_free(&r);
    }
    free(ref);
  }
  sp_program_free(&prog);
  for (int q = 0; q < nparams; q++) free(params[q].name);
  return rc;
}
