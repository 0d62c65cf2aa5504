/* placement_replay: the model's L1 and L2 counts of a candidate under the block placement a GPU
 * recorded (validation/probes/placement_run.cu), or under the arch's dealing order
 * (sp_trace_deal_blocks), beside its own b mod S placement, per SM. All the work is in the
 * library (validation/placement.c, traces/dealing.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/analyzer.h"
#include "schedpredict/arch.h"
#include "schedpredict/placement.h"
#include "schedpredict/rank.h"

static const char pr_usage[] =
    "usage: placement_replay FILE.c --nest LINE --placement CSV|dealt [options] [-- COMPILER-ARGS]\n"
    "\n"
    "Simulates one candidate of the nest at LINE on a few SMs, each SM alone with its L1 and a\n"
    "1/S share of the L2, twice: with the model's placement (block b on SM b mod S) and with\n"
    "another one:\n"
    "  CSV    recorded on a GPU (block,smid,start_ns,end_ns; written by\n"
    "         validation/probes/placement_run.cu), to hold against the GPU's counters of the run\n"
    "         that recorded it;\n"
    "  dealt  the first wave dealt in the order of the arch's block_dealing_cycle (measured on\n"
    "         the H100), the later blocks to the SMs' free slots in a random order (--seed).\n"
    "Prints per SM and in total the L1 hit rate of loads (ld_l1_hit_sectors / ld_sectors) and\n"
    "the L2 read sectors.\n"
    "\n"
    "  --nest LINE         the nest (a line of FILE within it)\n"
    "  --candidate ID      the candidate's id in `schedpredict --emit-plan`'s plan (default: the\n"
    "                      compiler default)\n"
    "  --compiler gcc|nvc  the space and default as schedpredict's (default gcc)\n"
    "  --arch NAME         GPU description (default h100)\n"
    "  --sms N             simulate N SMs spread over the GPU (default 8)\n"
    "  --param NAME=VALUE  as schedpredict's\n"
    "  --seed N            the random refills of --placement dealt (default 1)\n"
    "\n"
    "exit codes: 0 ok, 1 internal error, 2 bad command line, 3 unreadable or invalid input\n"
    "(the C file or the CSV), 4 a value is missing (--param), 5 no nest at LINE.\n";

static int pr_usage_error(const char *msg, const char *arg)
{
  fprintf(stderr, "placement_replay: error: ");
  fprintf(stderr, msg, arg);
  fprintf(stderr, "\n(placement_replay --help for usage)\n");
  return SP_EXIT_USAGE;
}

static double pr_l1_pct(const sp_cm_counters *c)
{
  return 100.0 * sp_cm_l1_hit_rate(c);
}

static void pr_add(sp_cm_counters *t, const sp_cm_counters *c)
{
  t->ld_sectors += c->ld_sectors;
  t->ld_l1_hit_sectors += c->ld_l1_hit_sectors;
  t->l2_read_sectors += c->l2_read_sectors;
}

int main(int argc, char **argv)
{
  const char *file = NULL, *csv = NULL, *arch_name = "h100";
  long line = 0, cand = -1, nsms = 8, seed = 1;
  bool gcc = true;
  sp_param params[32];
  int nparams = 0;
  int ncargs = 0;
  const char **cargs = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(pr_usage, stdout);
      return 0;
    }
    if (strcmp(a, "--") == 0) {
      cargs = (const char **)argv + i + 1;
      ncargs = argc - i - 1;
      break;
    }
    if (a[0] != '-') {
      if (file) return pr_usage_error("one FILE.c only ('%s' is a second)", a);
      file = a;
      continue;
    }
    if (i + 1 >= argc) return pr_usage_error("%s needs a value", a);
    const char *v = argv[++i];
    char *end;
    if (strcmp(a, "--nest") == 0 || strcmp(a, "--candidate") == 0 || strcmp(a, "--sms") == 0 ||
        strcmp(a, "--seed") == 0) {
      long n = strtol(v, &end, 10);
      bool zero_ok = strcmp(a, "--candidate") == 0 || strcmp(a, "--seed") == 0;
      if (!*v || *end || n < 0 || (n == 0 && !zero_ok)) return pr_usage_error("expected a number, not '%s'", v);
      if (strcmp(a, "--nest") == 0) line = n;
      else if (strcmp(a, "--sms") == 0) nsms = n;
      else if (strcmp(a, "--seed") == 0) seed = n;
      else cand = n;
    } else if (strcmp(a, "--placement") == 0) {
      csv = v;
    } else if (strcmp(a, "--arch") == 0) {
      arch_name = v;
    } else if (strcmp(a, "--compiler") == 0) {
      if (strcmp(v, "gcc") != 0 && strcmp(v, "nvc") != 0)
        return pr_usage_error("--compiler takes gcc or nvc, not '%s'", v);
      gcc = strcmp(v, "gcc") == 0;
    } else if (strcmp(a, "--param") == 0) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || nparams == 32) return pr_usage_error("--param takes NAME=VALUE, not '%s'", v);
      params[nparams].name = strndup(v, (size_t)(eq - v));
      params[nparams].value = strtoll(eq + 1, &end, 10);
      if (*end || !params[nparams].name) return pr_usage_error("--param %s: not an integer", v);
      nparams++;
    } else {
      return pr_usage_error("unknown option '%s'", a);
    }
  }
  if (!file || !csv || line <= 0)
    return pr_usage_error("%s", "FILE.c, --nest LINE and --placement CSV|dealt are needed");
  const bool dealt = strcmp(csv, "dealt") == 0;

  int rc = SP_EXIT_INPUT;
  char err[512];
  sp_arch arch;
  sp_program prog = {0};
  sp_space space = {0};
  sp_block_placement place = {0};
  FILE *f = NULL;
  if (sp_arch_load(arch_name, &arch, err, sizeof err) != 0) {
    fprintf(stderr, "placement_replay: error: %s\n", err);
    goto out;
  }
  sp_diag diag;
  sp_diag_init(&diag, stderr);
  sp_analyzer_options ao = {0};
  ao.clang_args = cargs;
  ao.nclang_args = ncargs;
  ao.params = params;
  ao.nparams = nparams;
  const char *files[] = {file};
  int arc = sp_analyze(files, 1, &ao, &diag, &prog);
  if (arc != SP_EXIT_OK) {
    rc = arc;
    goto out;
  }
  const sp_nest *nest = NULL;
  for (int i = 0; i < prog.nnests && !nest; i++)
    if (prog.nests[i].loc.line == (unsigned)line) nest = &prog.nests[i];
  if (!nest) {
    fprintf(stderr, "placement_replay: error: %s: no nest starts at line %ld (schedpredict lists "
                    "the nests and their lines)\n", file, line);
    rc = SP_EXIT_NO_NESTS;
    goto out;
  }
  sp_space_options so = {0};
  so.allow_interchange = true;
  so.gcc_default = gcc;
  if (sp_space_build(nest, &arch, &so, &space, err, sizeof err) != 0) {
    fprintf(stderr, "placement_replay: error: %s\n", err);
    goto out;
  }
  if (cand >= space.n) {
    fprintf(stderr, "placement_replay: error: --candidate %ld: the nest has %d candidates (0-%d)\n",
            cand, space.n, space.n - 1);
    rc = SP_EXIT_USAGE;
    goto out;
  }
  const sp_schedule *s = &space.items[cand >= 0 ? cand : space.default_index];
  int64_t nblocks = s->grid[0] * s->grid[1] * s->grid[2];
  if (dealt) {
    int per_sm = sp_schedule_blocks_per_sm(&arch, s);
    if (sp_trace_deal_blocks(&arch, nblocks, per_sm, SP_REFILL_RANDOM, (uint64_t)seed, &place) != 0) {
      fprintf(stderr, "placement_replay: error: cannot deal %lld blocks (at most %lld)\n",
              (long long)nblocks, (long long)SP_DEAL_MAX_BLOCKS);
      rc = SP_EXIT_INTERNAL;
      goto out;
    }
  } else {
    f = fopen(csv, "r");
    if (!f) {
      fprintf(stderr, "placement_replay: error: %s: cannot read it\n", csv);
      goto out;
    }
    if (sp_place_read_csv(f, csv, arch.sm_count, nblocks, &place, err, sizeof err) != 0) {
      fprintf(stderr, "placement_replay: error: %s\n", err);
      goto out;
    }
  }
  char mapping[256];
  sp_report_cuda_mapping(nest, s, mapping, sizeof mapping);
  printf("%s:%u candidate %ld (%s: %s) block %dx%dx%d grid %lldx%lldx%lld on %s\n", file,
         nest->loc.line, cand >= 0 ? cand : (long)space.default_index, s->name, mapping,
         s->block[0], s->block[1], s->block[2], (long long)s->grid[0], (long long)s->grid[1],
         (long long)s->grid[2], arch.name);
  const char *label = dealt ? "dealt" : "recorded";
  if (dealt)
    printf("placement: dealt (%s, refills random, seed %ld)\n\n",
           arch.n_block_dealing_cycle ? "the arch's block_dealing_cycle" : "no block_dealing_cycle: 0, 1, ..., S-1", seed);
  else
    printf("placement: %s\n\n", csv);
  printf("  SM   blocks  L1 hit %%  L2 reads    | %8s: blocks  L1 hit %%  L2 reads\n", label);
  if (nsms > arch.sm_count) nsms = arch.sm_count;
  sp_cm_counters tot[2] = {{0}};
  sp_cm_options cm = {0};
  for (long k = 0; k < nsms; k++) {
    int sm = (int)(k * arch.sm_count / nsms);
    sp_cm_counters c[2];
    int64_t nb[2];
    for (int p = 0; p < 2; p++)
      if (sp_place_simulate_sm(nest, s, &arch, &cm, p ? &place : NULL, sm, &c[p], &nb[p]) != 0) {
        fprintf(stderr, "placement_replay: error: the simulation of SM %d failed\n", sm);
        rc = SP_EXIT_INTERNAL;
        goto out;
      }
    printf("%4d %8lld %9.2f %11lld   | %17lld %9.2f %9lld\n", sm, (long long)nb[0],
           pr_l1_pct(&c[0]), (long long)c[0].l2_read_sectors, (long long)nb[1], pr_l1_pct(&c[1]),
           (long long)c[1].l2_read_sectors);
    fflush(stdout);
    pr_add(&tot[0], &c[0]);
    pr_add(&tot[1], &c[1]);
  }
  printf("\nover %ld SMs: L1 hit %.2f %% (b mod S) vs %.2f %% (%s); L2 read sectors x%d: "
         "%.4g vs %.4g\n",
         nsms, pr_l1_pct(&tot[0]), pr_l1_pct(&tot[1]), label, arch.sm_count,
         (double)tot[0].l2_read_sectors * arch.sm_count / nsms,
         (double)tot[1].l2_read_sectors * arch.sm_count / nsms);
  rc = 0;
out:
  if (f) fclose(f);
  sp_trace_placement_free(&place);
  sp_space_free(&space);
  sp_program_free(&prog);
  for (int i = 0; i < nparams; i++) free(params[i].name);
  return rc;
}
