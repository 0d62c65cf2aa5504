/* schedvalidate: runs a schedpredict plan's CUDA candidates on a GPU and writes measured.json
   (validation/FORMATS.md). This process never loads the CUDA driver: children do the GPU work. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sv_gpu.h"
#include "sv_metrics.h"
#include "sv_ncu.h"
#include "sv_output.h"
#include "sv_plan.h"
#include "sv_proc.h"
#include "sv_run.h"
#include "sv_select.h"
#include "sv_tune.h"

#ifndef SV_VERSION
#define SV_VERSION "dev"
#endif

static void usage(FILE *f) {
  fprintf(f,
          "usage: schedvalidate PLAN.json -o MEASURED.json [options]\n"
          "       schedvalidate tune PLAN.json -o SEARCH.json --table [options]   (see tune --help)\n"
          "Runs every selected CUDA candidate of a schedpredict plan on the GPU: compiles it with\n"
          "NVRTC for the device, checks its outputs against the plan's reference candidate, times it\n"
          "with CUDA events (L2 flushed before each run) and reads memory counters with CUPTI.\n"
          "\n"
          "  -o, --output FILE       measured.json to write (atomically; never replaced without --force)\n"
          "      --force             replace existing output files\n"
          "      --backend B         cupti (default: CUPTI Range Profiler) or ncu (Nsight Compute CLI)\n"
          "      --ncu PATH          the ncu program for --backend ncu (default: ncu in PATH, then\n"
          "                          /usr/local/cuda/bin/ncu)\n"
          "      --no-metrics        time only, read no counters (when profiling is not permitted)\n"
          "      --repeats N         timed runs per candidate, median reported (default 7, at least 5)\n"
          "      --warmup N          untimed runs before them, the checked run included (default 2)\n"
          "      --max-kernel-ms MS  a first run slower than this is the only timed run (default 2000)\n"
          "      --timeout-s S       per-candidate limit; past it the candidate is a timeout (default 60)\n"
          "      --shard K/N         run the candidates at plan positions p with p mod N = K-1\n"
          "                          (0-based positions over all kernels; for Slurm job arrays)\n"
          "      --kernel ID         only the kernel with this id (e.g. transpose.c:12)\n"
          "      --candidates LIST   only these candidate ids, e.g. 1,5,9\n"
          "      --device N          GPU ordinal (default 0)\n"
          "      --write-arch FILE   also write the device's architecture description (arch JSON),\n"
          "      --arch-template F   taking what the device does not report from F (e.g. arch/h100.json)\n"
          "      --dump-sources DIR  write each selected candidate's full CUDA source to DIR and exit\n"
          "      --dry-run           check the plan, list the selected candidates and exit\n"
          "  -h, --help              this text;  --version  the version\n"
          "\n"
          "Environment: SCHEDVALIDATE_LIBCUDA=PATH loads that driver library instead of libcuda.so.1.\n"
          "\n"
          "Exit status: 0 done (candidates that failed are recorded with their status), 1 the run\n"
          "failed (output not writable, ...) or was interrupted by SIGINT/SIGTERM (what was measured\n"
          "is written, the rest marked skipped), 2 bad usage or output exists, 3 bad plan, 4 no GPU\n"
          "or no NVIDIA driver, 5 profiling not permitted (use --no-metrics or get counter access).\n");
}

static int die(int code, const char *fmt, const char *arg) {
  fprintf(stderr, "schedvalidate: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return code;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static char *join_argv(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = calloc(n, 1);
  for (int i = 0; s && i < argc; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

static json_t *plan_sha256(const char *path) {
  char *argv[] = {"sha256sum", "--", (char *)path, NULL};
  char *out = NULL;
  size_t len = 0;
  json_t *r = json_null();
  if (sv_capture(argv, 60, 1, &out, &len) == 0 && out && len >= 64) {
    out[64] = 0;
    r = json_string(out);
  }
  free(out);
  return r;
}

static const char *find_ncu(const char *given) {
  if (given) return given;
  char *argv[] = {"sh", "-c", "command -v ncu", NULL};
  char *out = NULL;
  size_t len = 0;
  int found = sv_capture(argv, 10, 1, &out, &len) == 0 && len > 0;
  free(out);
  if (found) return "ncu";
  return access("/usr/local/cuda/bin/ncu", X_OK) == 0 ? "/usr/local/cuda/bin/ncu" : "ncu";
}

static int dump_sources(const sv_plan *plan, const sv_item *items, long n, const char *dir) {
  if (mkdir(dir, 0777) && errno != EEXIST) return die(SV_EXIT_ERROR, "cannot create %s", dir);
  for (long i = 0; i < n; i++) {
    const sv_kernel *k = &plan->kernels[items[i].kernel];
    const sv_candidate *c = &k->cands[items[i].cand];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.cu", dir, c->kernel_name);
    FILE *f = fopen(path, "w");
    if (!f) return die(SV_EXIT_ERROR, "cannot write %s", path);
    fprintf(f, "// %s candidate %lld\n%s\n%s\n", k->id, (long long)c->id, k->prelude, c->source);
    if (fclose(f)) return die(SV_EXIT_ERROR, "cannot write %s", path);
    printf("%s\n", path);
  }
  return SV_EXIT_OK;
}

/* --backend ncu: fill each measured candidate's metrics from Nsight Compute. */
static void ncu_pass(const sv_plan *plan, const char *plan_path, const sv_item *items, long n,
                     json_t **records, const char *ncu, int device, int timeout_s) {
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) return;
  self[sl] = 0;
  for (long i = 0; i < n; i++) {
    json_t *rec = records[i];
    const char *st = json_string_value(json_object_get(rec, "status"));
    if (!st || (strcmp(st, "ok") && strcmp(st, "wrong_result"))) continue;
    const sv_kernel *k = &plan->kernels[items[i].kernel];
    double v[SV_N_METRICS];
    bool found[SV_N_METRICS];
    char err[1024];
    int got = sv_ncu_measure(ncu, self, plan_path, items[i].kernel, items[i].cand, device,
                             k->cands[items[i].cand].kernel_name, timeout_s, v, found, err, sizeof err);
    if (got > 0) {
      json_t *m = json_object();
      for (size_t j = 0; j < SV_N_METRICS; j++)
        if (found[j]) json_object_set_new(m, sv_metric_names[j], json_real(v[j]));
      json_object_set_new(rec, "metrics", m);
    } else {
      const char *old = json_string_value(json_object_get(rec, "message"));
      char buf[2048];
      snprintf(buf, sizeof buf, "%s%smetrics not collected: %s", old ? old : "", old ? "; " : "", err);
      json_object_set_new(rec, "message", sv_json_text(buf));
    }
    fprintf(stderr, "schedvalidate: ncu [%ld/%ld] %s candidate %lld: %s\n", i + 1, n, k->id,
            (long long)k->cands[items[i].cand].id, got > 0 ? "metrics read" : err);
  }
}

static json_t *measured_json(const sv_plan *plan, const char *plan_path, const sv_item *items, long n,
                             const sv_results *res, const char *command, const char *backend,
                             const char *shard, const sv_gpu_opts *o) {
  char date[32];
  time_t t = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
  json_t *kernels = json_array();
  for (size_t k = 0; k < plan->n_kernels; k++) {
    json_t *cands = json_array();
    for (size_t c = 0; c < plan->kernels[k].n_cands; c++)
      for (long i = 0; i < n; i++)
        if (items[i].kernel == k && items[i].cand == c && res->records[i])
          json_array_append(cands, res->records[i]);
    if (json_array_size(cands))
      json_array_append_new(kernels, json_pack("{s:s, s:o}", "id", plan->kernels[k].id, "candidates", cands));
    else
      json_decref(cands);
  }
  return json_pack("{s:s, s:i, s:{s:s, s:o}, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:O, "
                   "s:{s:i, s:i, s:s, s:b}, s:o}",
                   "schema", "schedpredict-measurements", "schema_version", 1,
                   "plan", "path", plan_path, "sha256", plan_sha256(plan_path),
                   "runner", "tool", "schedvalidate", "version", SV_VERSION, "command", command,
                   "date", date, "backend", backend, "shard", shard,
                   "device", res->device ? res->device : json_null(),
                   "timing", "warmup", o->warmup, "repeats", o->repeats, "statistic", "median",
                   "l2_flushed", 1,
                   "kernels", kernels);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "tune")) return sv_tune_main(argc - 1, argv + 1);
  enum { O_FORCE = 256, O_BACKEND, O_NCU, O_NOMETRICS, O_REPEATS, O_WARMUP, O_MAXMS, O_TIMEOUT,
         O_SHARD, O_KERNEL, O_CANDS, O_DEVICE, O_WARCH, O_ATMPL, O_DUMP, O_DRY, O_RUNONE, O_VERSION };
  static const struct option opts[] = {
      {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, O_FORCE},
      {"backend", required_argument, 0, O_BACKEND}, {"ncu", required_argument, 0, O_NCU},
      {"no-metrics", no_argument, 0, O_NOMETRICS}, {"repeats", required_argument, 0, O_REPEATS},
      {"warmup", required_argument, 0, O_WARMUP}, {"max-kernel-ms", required_argument, 0, O_MAXMS},
      {"timeout-s", required_argument, 0, O_TIMEOUT}, {"shard", required_argument, 0, O_SHARD},
      {"kernel", required_argument, 0, O_KERNEL}, {"candidates", required_argument, 0, O_CANDS},
      {"device", required_argument, 0, O_DEVICE}, {"write-arch", required_argument, 0, O_WARCH},
      {"arch-template", required_argument, 0, O_ATMPL}, {"dump-sources", required_argument, 0, O_DUMP},
      {"dry-run", no_argument, 0, O_DRY}, {"run-one", required_argument, 0, O_RUNONE},
      {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, O_VERSION}, {0, 0, 0, 0}};
  const char *out = NULL, *backend = "cupti", *ncu = NULL, *shard = "1/1", *warch = NULL,
             *atmpl = NULL, *dump = NULL, *run_one = NULL;
  bool force = false, dry = false;
  sv_gpu_opts go = {.metrics = true, .warmup = 2, .repeats = 7, .max_kernel_ms = 2000, .device = 0};
  sv_selection sel = {.shard_k = 1, .shard_n = 1};
  long timeout_s = 60, v;
  char err[8192];
  int ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'o': out = optarg; break;
    case O_FORCE: force = true; break;
    case O_BACKEND:
      if (strcmp(optarg, "cupti") && strcmp(optarg, "ncu"))
        return die(SV_EXIT_USAGE, "--backend '%s': expected cupti or ncu", optarg);
      backend = optarg;
      break;
    case O_NCU: ncu = optarg; break;
    case O_NOMETRICS: go.metrics = false; break;
    case O_REPEATS:
      if (parse_int(optarg, 5, 1000, &v)) return die(SV_EXIT_USAGE, "--repeats '%s': expected an integer from 5 to 1000", optarg);
      go.repeats = (int)v;
      break;
    case O_WARMUP:
      if (parse_int(optarg, 1, 1000, &v)) return die(SV_EXIT_USAGE, "--warmup '%s': expected an integer from 1 to 1000", optarg);
      go.warmup = (int)v;
      break;
    case O_MAXMS: {
      char *end;
      go.max_kernel_ms = strtod(optarg, &end);
      if (end == optarg || *end || !(go.max_kernel_ms > 0))
        return die(SV_EXIT_USAGE, "--max-kernel-ms '%s': expected a positive number of milliseconds", optarg);
      break;
    }
    case O_TIMEOUT:
      if (parse_int(optarg, 1, 86400, &timeout_s)) return die(SV_EXIT_USAGE, "--timeout-s '%s': expected 1 to 86400 seconds", optarg);
      break;
    case O_SHARD:
      if (sv_parse_shard(optarg, &sel.shard_k, &sel.shard_n, err, sizeof err)) return die(SV_EXIT_USAGE, "%s", err);
      shard = optarg;
      break;
    case O_KERNEL: sel.kernel_id = optarg; break;
    case O_CANDS:
      free(sel.cand_ids);
      if (sv_parse_id_list(optarg, &sel.cand_ids, &sel.n_cand_ids, err, sizeof err)) return die(SV_EXIT_USAGE, "%s", err);
      break;
    case O_DEVICE:
      if (parse_int(optarg, 0, 1024, &v)) return die(SV_EXIT_USAGE, "--device '%s': expected a GPU ordinal", optarg);
      go.device = (int)v;
      break;
    case O_WARCH: warch = optarg; break;
    case O_ATMPL: atmpl = optarg; break;
    case O_DUMP: dump = optarg; break;
    case O_DRY: dry = true; break;
    case O_RUNONE: run_one = optarg; break;
    case 'h': usage(stdout); return SV_EXIT_OK;
    case O_VERSION: printf("schedvalidate %s\n", SV_VERSION); return SV_EXIT_OK;
    default:
      fprintf(stderr, "schedvalidate: unknown or incomplete option '%s' (see --help)\n", argv[optind - 1]);
      return SV_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "schedvalidate: expected exactly one plan file (see --help)\n");
    return SV_EXIT_USAGE;
  }
  const char *plan_path = argv[optind];
  if (!out && !dump && !dry && !run_one) return die(SV_EXIT_USAGE, "%s", "no output file: give -o MEASURED.json");
  if (warch && !atmpl) return die(SV_EXIT_USAGE, "%s", "--write-arch needs --arch-template FILE (e.g. arch/h100.json)");
  if (!strcmp(backend, "ncu") && !go.metrics) return die(SV_EXIT_USAGE, "%s", "--backend ncu and --no-metrics contradict each other");

  sv_plan plan;
  if (sv_plan_load(plan_path, &plan, err, sizeof err)) return die(SV_EXIT_PLAN, "%s", err);
  if (run_one) {
    unsigned long k, c;
    char extra;
    if (sscanf(run_one, "%lu:%lu%c", &k, &c, &extra) != 2 || k >= plan.n_kernels || c >= plan.kernels[k].n_cands)
      return die(SV_EXIT_USAGE, "--run-one '%s': expected KERNEL_INDEX:CANDIDATE_INDEX of the plan", run_one);
    int rc = sv_run_one(&plan, k, c, go.device);
    sv_plan_free(&plan);
    return rc;
  }
  sv_item *items = NULL;
  long n = sv_select(&plan, &sel, &items, err, sizeof err);
  if (n < 0) return die(SV_EXIT_USAGE, "%s", err);
  if (dump || dry) {
    int rc = SV_EXIT_OK;
    if (dump) rc = dump_sources(&plan, items, n, dump);
    else
      for (long i = 0; i < n; i++)
        printf("%s\t%lld\t%s\n", plan.kernels[items[i].kernel].id,
               (long long)plan.kernels[items[i].kernel].cands[items[i].cand].id,
               plan.kernels[items[i].kernel].cands[items[i].cand].kernel_name);
    free(items);
    free(sel.cand_ids);
    sv_plan_free(&plan);
    return rc;
  }
  if (!force && access(out, F_OK) == 0) return die(SV_EXIT_USAGE, "%s exists; use --force to replace it", out);
  if (warch && !force && access(warch, F_OK) == 0) return die(SV_EXIT_USAGE, "%s exists; use --force to replace it", warch);
  json_t *tmpl = NULL;
  if (atmpl) {
    json_error_t je;
    if (!(tmpl = json_load_file(atmpl, 0, &je))) {
      snprintf(err, sizeof err, "%s:%d:%d: %s", atmpl, je.line, je.column, je.text);
      return die(SV_EXIT_USAGE, "--arch-template: %s", err);
    }
  }
  bool use_ncu = !strcmp(backend, "ncu");
  if (use_ncu) {
    ncu = find_ncu(ncu);
    go.metrics = false; /* the children only time; ncu reads the counters afterwards */
  }
  fprintf(stderr, "schedvalidate: %ld candidate%s of %s (shard %s, backend %s%s)\n", n, n == 1 ? "" : "s",
          plan_path, shard, backend, go.metrics || use_ncu ? "" : ", no metrics");
  sv_job job = {&plan, items, (size_t)n, go, (int)timeout_s};
  sv_results res;
  int rc = sv_run(&job, &res);
  bool measured = false; /* anything to write? */
  for (long i = 0; i < n; i++) measured |= res.records && res.records[i] != NULL;
  if (rc) {
    fprintf(stderr, "schedvalidate: %s\n", res.message);
    if (rc == SV_EXIT_NOPERM && strstr(res.message, "--no-metrics") == NULL)
      fprintf(stderr, "schedvalidate: profiling is not permitted here; rerun with --no-metrics to time only\n");
  }
  if (measured || (!rc && n == 0)) { /* a shard without candidates still leaves its file */
    bool partial = rc || res.interrupted;
    if (partial) {
      /* Keep what was measured: the rest is recorded as skipped, and the run fails. */
      char why[2200];
      snprintf(why, sizeof why, "not run: %s", rc ? res.message : "the run was interrupted");
      for (long i = 0; i < n; i++)
        if (!res.records[i])
          res.records[i] = json_pack("{s:I, s:s, s:o}", "id",
                                     (json_int_t)plan.kernels[items[i].kernel].cands[items[i].cand].id,
                                     "status", "skipped", "message", sv_json_text(why));
      if (!rc) rc = SV_EXIT_ERROR;
    } else if (use_ncu)
      ncu_pass(&plan, plan_path, items, n, res.records, ncu, go.device, (int)timeout_s * 4);
    char *command = join_argv(argc, argv);
    json_t *m = measured_json(&plan, plan_path, items, n, &res, command ? command : "", backend, shard, &go);
    free(command);
    if (!m || sv_write_json_atomic(m, out, force, err, sizeof err)) {
      fprintf(stderr, "schedvalidate: %s\n", m ? err : "out of memory building the output");
      rc = SV_EXIT_ERROR;
    } else
      fprintf(stderr, "schedvalidate: wrote %s%s\n", out, partial ? " (partial: the rest is marked skipped)" : "");
    json_decref(m);
  }
  if (!rc && warch) {
    json_t *a = res.device ? sv_arch_from_device(tmpl, res.device, warch, err, sizeof err) : NULL;
    if (!a || sv_write_json_atomic(a, warch, force, err, sizeof err)) {
      fprintf(stderr, "schedvalidate: --write-arch: %s\n", res.device ? err : "no device description");
      rc = SV_EXIT_ERROR;
    } else
      fprintf(stderr, "schedvalidate: wrote %s\n", warch);
    json_decref(a);
  }
  json_decref(tmpl);
  sv_results_free(&res, (size_t)n, plan.n_kernels);
  free(items);
  free(sel.cand_ids);
  sv_plan_free(&plan);
  return rc;
}
