/* schedpredict: the command line. All the work is in the library. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedpredict/advice.h"
#include "schedpredict/analyzer.h"
#include "schedpredict/arch.h"
#include "schedpredict/compare.h"
#include "schedpredict/harness.h"
#include "schedpredict/plan.h"
#include "schedpredict/rank.h"

static const char sp_usage[] =
    "usage: schedpredict [options] FILE.c... [-- COMPILER-ARGS]\n"
    "       schedpredict compare PLAN.json MEASURED.json...   (model vs GPU)\n"
    "       schedpredict help [TOPIC]   (formats fix compilers validation space analyzer exit-codes)\n"
    "\n"
    "Ranks the ways to map each OpenACC / OpenMP-target loop nest of C files onto an NVIDIA GPU\n"
    "by modeled memory traffic and time, and tells which pragmas to write.\n"
    "\n"
    "  --arch NAME         GPU to model: k40 v100 a100 h100 (default) h200, or a .json\n"
    "  --list-archs        list the GPU descriptions\n"
    "  --compiler gcc|nvc  recommend what this OpenACC compiler can express (default gcc)\n"
    "  --format F          text (default), json, remarks, sarif, opt-record\n"
    "  --top N             candidates shown per nest (default 10)\n"
    "  --nest FILE:LINE    only the nest at that line\n"
    "  --fix               rewrite the pragmas in place (FILE.orig keeps the original)\n"
    "  --fix=diff          print the rewrite as a unified diff instead\n"
    "  --no-backup         --fix keeps no FILE.orig\n"
    "  --export-fixes FILE the rewrites as clang-tidy YAML (clang-apply-replacements)\n"
    "  -o FILE             write the output (or with --fix, the fixed source) to FILE\n"
    "  --force             allow replacing an existing -o, --export-fixes or .orig file\n"
    "  --block, --gangs, --vector, --exact, --l1-model   the schedule space (help space)\n"
    "  --param NAME=VALUE, -p DIR, --all-loops, --dump-ir, --summary   (help analyzer)\n"
    "  --emit-plan FILE    also write a validation plan for schedvalidate (help validation)\n"
    "  --emit-harness      write a timing harness (a C main) for the file's functions instead\n"
    "  -q, --quiet         only warnings and errors on stderr\n"
    "  --version, -h, --help\n"
    "  -- ARGS             arguments for the C parser (e.g. -DN=4096 -I include)\n"
    "\n"
    "exit codes: 0 ok, 1 internal error, 2 bad command line, 3 unreadable or invalid input,\n"
    "4 a value is missing (--param), 5 no loop nest (help exit-codes).\n";

/* `schedpredict help TOPIC` */
static const struct {
  const char *name, *text;
} sp_help_topics[] = {
    {"formats",
     "--format text        the report: ranked candidates, the recommendation, why\n"
     "--format json        the same as JSON (schema doc/report.schema.json, \"schema_version\": 2)\n"
     "--format remarks     one line per nest on stderr in clang's form:\n"
     "                     FILE:LINE:COL: remark: ... [-Rschedpredict]\n"
     "--format sarif       SARIF 2.1.0; rules better-schedule, uncoalesced-access,\n"
     "                     idle-vector-lanes, too-few-gangs, parallel-dependence,\n"
     "                     partial-sector-stores, gcc-kernels-serial; fixes carry the\n"
     "                     replacement pragma text\n"
     "--format opt-record  LLVM optimization records (YAML, '--- !Analysis'), as clang's\n"
     "                     -fsave-optimization-record writes them: name the file *.opt.yaml and\n"
     "                     run opt-viewer.py on it for annotated HTML source\n"},
    {"fix",
     "--fix rewrites each nest's pragmas to the schedule recommended for --compiler: gang,\n"
     "worker, vector, seq, collapse, num_gangs, num_workers, vector_length are replaced\n"
     "(auto and tile removed), every other clause (data, reduction, private, async,\n"
     "present...) and the line layout are kept. Loops are interchanged only when the schedule\n"
     "needs it and it is legal (parallel, rectangular loops inside the same reductions). A\n"
     "reduction spans the loops inside its loop, and OpenACC wants its clause on each loop\n"
     "directive of that span: a directive the fix adds or splits off gets it. The file is\n"
     "replaced atomically; FILE.orig keeps the original unless --no-backup. With -o OUT the\n"
     "fixed source goes to OUT; --fix=diff prints a unified diff. A second run changes\n"
     "nothing. --export-fixes FILE writes the same edits for clang-apply-replacements.\n"
     "Nests the rewrite cannot handle (OpenMP, serial, a parallel region shared by several\n"
     "nests) are left alone with a warning.\n"},
    {"compilers",
     "gcc (default): gang = blockIdx.x, worker = threadIdx.y, vector = threadIdx.x; no y/z grid;\n"
     "  vector_length a multiple of 32 up to 1024; num_workers <= 32, <= 15 when\n"
     "  vector_length > 32; num_workers x vector_length <= 1024.\n"
     "nvc: the same mapping; vector_length a multiple of 32; num_workers x vector_length <= 1024.\n"
     "The recommendation is the best ranked schedule the compiler can express; when the model's\n"
     "overall best cannot be expressed it is shown as CUDA (threadIdx/blockIdx per loop).\n"
     "The baseline (\"compiler default\") for gcc is what GCC 12 does with the nest as written:\n"
     "your clauses kept, bare loops partitioned as GCC does (outermost gang [worker], innermost\n"
     "vector), dims as libgomp picks them (vector 32; on an H100 16896 gangs x 32 workers when\n"
     "left open). In a kernels region (built without --param=openacc-kernels=decompose) GCC\n"
     "runs the region on one thread, or its proven outer loop alone on gangs of one lane, and\n"
     "the gcc baseline does the same there (finding gcc-kernels-serial).\n"
     "For nvc: outer loop gang with one gang per iteration, innermost vector(128).\n"
     "For gcc both times include GCC 12's reduction code where the arch has its figures (H100,\n"
     "H200): a vector loop of vector_length V > 32 folds a sum with V(V+1)/2 compare-and-swap\n"
     "attempts on one shared word per row, and every gang retries the global word.\n"},
    {"validation",
     "--emit-plan FILE     also write the validation plan: each candidate as a CUDA kernel\n"
     "                     (validation/FORMATS.md), for schedvalidate on a GPU machine\n"
     "--plan-top N         the plan holds the model's N best (default 20) ...\n"
     "--plan-sample M      ... plus M more evenly spaced by rank (default 20); spaces of at\n"
     "                     most N+M candidates go in whole, the compiler default always\n"
     "--emit-harness       instead of the report, a C main that times the file's functions\n"
     "                     (scripts/gcc_openacc_build.sh: the GCC OpenACC proof)\n"
     "schedpredict compare PLAN.json MEASURED.json...   the plan's predictions against the\n"
     "                     GPU's measurements (schedpredict compare --help)\n"},
    {"space",
     "--block 32x8,128     only these block shapes (x[xy[xz]])\n"
     "--gangs 132,264      only these capped grid sizes (plus covering grids)\n"
     "--vector 32,64       only blocks whose x size (vector_length) is one of these\n"
     "--registers N        the registers a thread of your compiled kernel holds (ptxas -v,\n"
     "                     nvc -gpu=ptxinfo): fewer blocks fit an SM when N x threads exceeds\n"
     "                     its registers; not given, no register limit is assumed\n"
     "--exact              simulate every candidate in full (no sampling)\n"
     "--l1-model base|modeled  the dissertation's L1 variant (default base)\n"},
    {"analyzer",
     "--param NAME=VALUE   value of a run-time variable (function parameter, global), in a\n"
     "                     bound, a subscript or a parity guard's remainder\n"
     "-p DIR               read compiler arguments from DIR/compile_commands.json\n"
     "--all-loops          also analyze every outermost loop nest without a directive\n"
     "--dump-ir            print the loop-nest IR as JSON (schema 'schedpredict-ir')\n"
     "--summary            print what the analyzer found in each nest, without ranking\n"
     "Directives: #pragma lines and _Pragma(\"...\"), in place or through an object-like\n"
     "macro. Loops and directives inside a function-like macro's expansion (FOR(i, n)) are\n"
     "not read: run on the preprocessed file, cc -E -P FILE.c > FILE.pp.c (it keeps the\n"
     "pragmas).\n"},
    {"exit-codes",
     "0  ok\n1  internal error (a bug: please report it)\n2  bad command line\n"
     "3  a file is missing, unreadable, binary or not valid C (clang's errors are shown), or an\n"
     "   output cannot be written\n"
     "4  a bound needs a value nobody gave (the message names the --param to add), or a byte\n"
     "   offset overflows 64 bits\n5  no loop nest to schedule (or none at --nest FILE:LINE)\n"},
};

static int sp_help(const char *topic) {
  for (size_t i = 0; i < sizeof sp_help_topics / sizeof sp_help_topics[0]; i++)
    if (!topic || strcmp(topic, sp_help_topics[i].name) == 0) {
      if (!topic) printf("== %s ==\n", sp_help_topics[i].name);
      fputs(sp_help_topics[i].text, stdout);
      if (topic) return SP_EXIT_OK;
    }
  if (!topic) return SP_EXIT_OK;
  fprintf(stderr, "schedpredict: error: no help topic '%s' (topics: formats fix compilers "
                  "validation space analyzer exit-codes)\n", topic);
  return SP_EXIT_USAGE;
}

enum { SP_FMT_TEXT, SP_FMT_JSON, SP_FMT_REMARKS, SP_FMT_SARIF, SP_FMT_OPT_RECORD };

typedef struct sp_cli {
  const char **files;
  int nfiles;
  sp_param *params;
  int nparams;
  const char *output;
  bool force, dump_ir, summary, list_archs, exact;
  int format; /* SP_FMT_* */
  sp_adv_compiler compiler;
  sp_adv_fix_mode fix;
  bool no_backup;
  const char *export_fixes;
  const char *nest_file; /* --nest FILE:LINE */
  unsigned nest_line;
  const char *arch;
  int top;
  int (*blocks)[3];
  int nblocks;
  int64_t *gangs;
  int ngangs;
  int *vectors;
  int nvectors;
  int registers; /* --registers; 0 = not given */
  sp_cm_l1_variant l1_variant;
  sp_analyzer_options opt;
  bool quiet;
  const char *emit_plan;
  bool emit_harness;
  sp_plan_options plan;
} sp_cli;

static int sp_usage_error(const char *fmt, const char *arg) {
  fputs("schedpredict: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(run 'schedpredict --help' for the options)\n", stderr);
  return SP_EXIT_USAGE;
}

static int sp_parse_param(sp_cli *cli, const char *text) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    return sp_usage_error("--param takes NAME=VALUE (e.g. --param n=4096), not '%s'", text);
  errno = 0;
  char *end;
  long long v = strtoll(eq + 1, &end, 0);
  if (errno || end == eq + 1 || *end)
    return sp_usage_error("--param %s: the value is not a 64-bit integer", text);
  sp_param *p = realloc(cli->params, (size_t)(cli->nparams + 1) * sizeof *p);
  if (!p) return SP_EXIT_INTERNAL;
  cli->params = p;
  p[cli->nparams].name = strndup(text, (size_t)(eq - text));
  p[cli->nparams].value = v;
  cli->nparams++;
  return SP_EXIT_OK;
}

/* Comma-separated positive integers; false on anything else. */
static bool sp_parse_list(const char *text, int64_t **out, int *n) {
  *n = 0;
  *out = NULL;
  const char *p = text;
  while (*p) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno || end == p || v <= 0 || (*end && *end != ',')) return false;
    int64_t *grown = realloc(*out, (size_t)(*n + 1) * sizeof *grown);
    if (!grown) return false;
    *out = grown;
    (*out)[(*n)++] = v;
    p = *end ? end + 1 : end;
  }
  return *n > 0;
}

/* A whole decimal number in lo..hi (v: an option's value). */
static bool sp_parse_ranged(const char *v, long lo, long hi, long *out) {
  char *end;
  long n = strtol(v, &end, 10);
  if (end == v || *end || n < lo || n > hi) return false;
  *out = n;
  return true;
}

static int sp_parse_model_option(sp_cli *cli, const char *opt, const char *v) {
  if (strcmp(opt, "--arch") == 0) {
    cli->arch = v;
  } else if (strcmp(opt, "--top") == 0) {
    long t;
    if (!sp_parse_ranged(v, 1, 100000, &t))
      return sp_usage_error("--top takes a positive number, not '%s'", v);
    cli->top = (int)t;
  } else if (strcmp(opt, "--format") == 0) {
    static const char *names[] = {"text", "json", "remarks", "sarif", "opt-record"};
    cli->format = -1;
    for (int k = 0; k < 5; k++)
      if (strcmp(v, names[k]) == 0) cli->format = k;
    if (cli->format < 0)
      return sp_usage_error("--format takes text, json, remarks, sarif or opt-record, not '%s'", v);
  } else if (strcmp(opt, "--compiler") == 0) {
    if (strcmp(v, "gcc") == 0) cli->compiler = SP_ADV_GCC;
    else if (strcmp(v, "nvc") == 0) cli->compiler = SP_ADV_NVC;
    else return sp_usage_error("--compiler takes gcc or nvc, not '%s'", v);
  } else if (strcmp(opt, "--nest") == 0) {
    const char *colon = strrchr(v, ':');
    char *end;
    long line = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == v || *end || line < 1)
      return sp_usage_error("--nest takes FILE:LINE (e.g. --nest kernel.c:42), not '%s'", v);
    cli->nest_file = v;
    cli->nest_line = (unsigned)line;
  } else if (strcmp(opt, "--l1-model") == 0) {
    if (strcmp(v, "base") == 0) cli->l1_variant = SP_CM_L1_BASE;
    else if (strcmp(v, "modeled") == 0) cli->l1_variant = SP_CM_L1_MODELED;
    else return sp_usage_error("--l1-model takes base or modeled, not '%s'", v);
  } else if (strcmp(opt, "--block") == 0) {
    char *copy = strdup(v), *save = NULL;
    if (!copy) return SP_EXIT_INTERNAL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      int d[3] = {1, 1, 1}, nd = 0;
      for (char *q = tok; *q && nd < 3; nd++) {
        char *end;
        long x = strtol(q, &end, 10);
        if (end == q || x < 1 || x > 1024 || (*end && *end != 'x')) {
          free(copy);
          return sp_usage_error("--block takes shapes like 32x8,128 (each side 1..1024), not '%s'", v);
        }
        d[nd] = (int)x;
        q = *end ? end + 1 : end;
      }
      if ((long)d[0] * d[1] * d[2] > 1024) {
        free(copy);
        return sp_usage_error("--block %s: more than 1024 threads in a block", v);
      }
      int (*grown)[3] = realloc(cli->blocks, (size_t)(cli->nblocks + 1) * sizeof *grown);
      if (!grown) {
        free(copy);
        return SP_EXIT_INTERNAL;
      }
      cli->blocks = grown;
      memcpy(cli->blocks[cli->nblocks++], d, sizeof d);
    }
    free(copy);
    if (!cli->nblocks) return sp_usage_error("--block takes shapes like 32x8,128, not '%s'", v);
  } else if (strcmp(opt, "--registers") == 0) {
    long n;
    if (!sp_parse_ranged(v, 1, 255, &n))
      return sp_usage_error("--registers takes a count of registers a thread, 1..255, not '%s'", v);
    cli->registers = (int)n;
  } else if (strcmp(opt, "--gangs") == 0) {
    free(cli->gangs);
    if (!sp_parse_list(v, &cli->gangs, &cli->ngangs))
      return sp_usage_error("--gangs takes positive numbers like 132,264, not '%s'", v);
  } else if (strcmp(opt, "--vector") == 0) {
    int64_t *list;
    int n;
    if (!sp_parse_list(v, &list, &n)) {
      free(list);
      return sp_usage_error("--vector takes lengths like 32,64,128, not '%s'", v);
    }
    free(cli->vectors);
    cli->vectors = malloc((size_t)n * sizeof *cli->vectors);
    for (int i = 0; cli->vectors && i < n; i++) cli->vectors[i] = (int)list[i];
    cli->nvectors = cli->vectors ? n : 0;
    free(list);
  }
  return SP_EXIT_OK;
}

static int sp_parse_plan_option(sp_cli *cli, const char *opt, const char *v) {
  if (strcmp(opt, "--emit-plan") == 0) {
    cli->emit_plan = v;
    return SP_EXIT_OK;
  }
  long n;
  if (!sp_parse_ranged(v, 0, 1000000, &n))
    return sp_usage_error("--plan-top and --plan-sample take a number >= 0, not '%s'", v);
  *(strcmp(opt, "--plan-top") == 0 ? &cli->plan.top : &cli->plan.sample) = (int)n;
  return SP_EXIT_OK;
}

static int sp_parse_args(sp_cli *cli, int argc, char **argv) {
  cli->files = calloc((size_t)argc, sizeof *cli->files);
  if (!cli->files) return SP_EXIT_INTERNAL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = SP_EXIT_OK;
    if (strcmp(a, "--") == 0) {
      cli->opt.clang_args = (const char *const *)argv + i + 1;
      cli->opt.nclang_args = argc - i - 1;
      break;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(sp_usage, stdout);
      exit(SP_EXIT_OK);
    } else if (strcmp(a, "--version") == 0) {
      printf("schedpredict %s (IR schema %d)\n", SP_VERSION, SP_IR_SCHEMA_VERSION);
      exit(SP_EXIT_OK);
    } else if (i == 1 && strcmp(a, "help") == 0) {
      exit(sp_help(i + 1 < argc ? argv[i + 1] : NULL));
    } else if (strcmp(a, "--fix") == 0 || strcmp(a, "--fix=diff") == 0) {
      cli->fix = a[5] ? SP_ADV_FIX_DIFF : SP_ADV_FIX_WRITE;
    } else if (strcmp(a, "--no-backup") == 0) {
      cli->no_backup = true;
    } else if (strcmp(a, "--export-fixes") == 0) {
      if (i + 1 >= argc) return sp_usage_error("%s needs a value", a);
      cli->export_fixes = argv[++i];
    } else if (strcmp(a, "--dump-ir") == 0) {
      cli->dump_ir = true;
    } else if (strcmp(a, "--all-loops") == 0) {
      cli->opt.all_loops = true;
    } else if (strcmp(a, "--force") == 0) {
      cli->force = true;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      cli->quiet = true;
    } else if (strcmp(a, "--emit-harness") == 0) {
      cli->emit_harness = true;
    } else if (strcmp(a, "--summary") == 0) {
      cli->summary = true;
    } else if (strcmp(a, "--list-archs") == 0) {
      cli->list_archs = true;
    } else if (strcmp(a, "--exact") == 0) {
      cli->exact = true;
    } else if (strcmp(a, "--arch") == 0 || strcmp(a, "--top") == 0 ||
               strcmp(a, "--format") == 0 || strcmp(a, "--block") == 0 ||
               strcmp(a, "--gangs") == 0 || strcmp(a, "--vector") == 0 ||
               strcmp(a, "--l1-model") == 0 || strcmp(a, "--compiler") == 0 ||
               strcmp(a, "--nest") == 0 || strcmp(a, "--registers") == 0) {
      if (i + 1 >= argc) return sp_usage_error("%s needs a value", a);
      rc = sp_parse_model_option(cli, a, argv[++i]);
    } else if (strcmp(a, "--emit-plan") == 0 || strcmp(a, "--plan-top") == 0 ||
               strcmp(a, "--plan-sample") == 0) {
      if (i + 1 >= argc) return sp_usage_error("%s needs a value", a);
      rc = sp_parse_plan_option(cli, a, argv[++i]);
    } else if (strcmp(a, "--param") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "-p") == 0) {
      if (i + 1 >= argc) return sp_usage_error("%s needs a value", a);
      const char *v = argv[++i];
      if (a[1] == '-') rc = sp_parse_param(cli, v);
      else if (a[1] == 'o') cli->output = v;
      else cli->opt.compdb_dir = v;
    } else if (strncmp(a, "--param=", 8) == 0) {
      rc = sp_parse_param(cli, a + 8);
    } else if (a[0] == '-' && a[1]) {
      return sp_usage_error("unknown option '%s'", a);
    } else {
      cli->files[cli->nfiles++] = a;
    }
    if (rc) return rc;
  }
  if (cli->nfiles == 0 && !cli->list_archs)
    return sp_usage_error("%s", "no input file (give one or more .c files)");
  if (cli->emit_plan && (cli->dump_ir || cli->summary))
    return sp_usage_error("%s", "--emit-plan needs the ranking: drop --dump-ir / --summary");
  if (cli->emit_harness && cli->nfiles != 1)
    return sp_usage_error("%s", "--emit-harness takes one input file");
  if (!cli->emit_plan && (cli->plan.top >= 0 || cli->plan.sample >= 0))
    return sp_usage_error("%s", "--plan-top and --plan-sample go with --emit-plan FILE");
  cli->opt.params = cli->params;
  cli->opt.nparams = cli->nparams;
  return SP_EXIT_OK;
}

/* Writes text to path atomically (temporary file and rename), so a reader never sees half. */
static int sp_write_output(const char *path, bool force, const char *text) {
  if (!force && access(path, F_OK) == 0) {
    fprintf(stderr, "schedpredict: error: %s exists; pass --force to replace it\n", path);
    return SP_EXIT_USAGE;
  }
  if (sp_adv_write_atomic(path, text, strlen(text)) != 0) {
    fprintf(stderr, "schedpredict: error: cannot write %s: %s\n", path, strerror(errno));
    return SP_EXIT_INPUT;
  }
  return SP_EXIT_OK;
}

static int sp_list_archs(void) {
  sp_arch_entry *entries = NULL;
  int n = 0;
  char err[512];
  if (sp_arch_list(&entries, &n, err, sizeof err) != 0) {
    fprintf(stderr, "schedpredict: error: %s\n", err);
    return SP_EXIT_INPUT;
  }
  for (int i = 0; i < n; i++)
    if (entries[i].ok) printf("%-8s %s\n", entries[i].name, entries[i].full_name);
    else printf("%-8s (does not load: %s)\n", entries[i].name, entries[i].error);
  free(entries);
  return SP_EXIT_OK;
}

static void sp_progress(void *ctx, int done, int total) {
  const char *what = ctx;
  fprintf(stderr, "\r%s: %d/%d candidates", what, done, total);
  if (done == total) fputs("\r\033[K", stderr);
}

static char *sp_with_newline(char *text);

static int sp_emit_plan(const sp_cli *cli, const sp_report_nest *rows, int n, const sp_arch *arch) {
  sp_diag diag;
  sp_diag_init(&diag, stderr);
  diag.quiet = cli->quiet;
  char *plan = sp_with_newline(sp_plan_json(rows, n, arch, &cli->plan, &diag));
  if (!plan) return SP_EXIT_INTERNAL;
  int rc = sp_write_output(cli->emit_plan, cli->force, plan);
  free(plan);
  return rc;
}

/* --nest FILE:LINE: LINE falls within the nest (its directives to its last reference). */
static bool sp_nest_at(const sp_nest *n, const char *spec, unsigned line) {
  size_t flen = (size_t)(strrchr(spec, ':') - spec), nlen = strlen(n->loc.file);
  if (nlen < flen || strncmp(n->loc.file + nlen - flen, spec, flen) != 0 ||
      (nlen > flen && n->loc.file[nlen - flen - 1] != '/'))
    return false;
  unsigned lo = n->loc.line, hi = n->loc.line;
  if (n->construct_clauses.directive_loc.line && n->construct_clauses.directive_loc.line < lo)
    lo = n->construct_clauses.directive_loc.line;
  for (int k = 0; k < n->nloops; k++) {
    unsigned d = n->loops[k].clauses.directive_loc.line;
    if (d && d < lo) lo = d;
    if (n->loops[k].loc.line > hi) hi = n->loops[k].loc.line;
  }
  for (int r = 0; r < n->nrefs; r++)
    if (n->refs[r].loc.line > hi) hi = n->refs[r].loc.line;
  return line >= lo && line <= hi;
}

/* The advice stage on the ranked rows: the report in the chosen format into *text (NULL when
 * the output went elsewhere), --fix and --export-fixes. */
static int sp_advise(const sp_cli *cli, sp_report_nest *rows, int n, const sp_arch *arch,
                     char **text) {
  sp_adv_options ao = {cli->compiler};
  sp_adv_nest *adv;
  if (sp_adv_build(rows, n, &ao, &adv) != 0) return SP_EXIT_INTERNAL;
  char **parts = calloc((size_t)n * 2 + 1, sizeof *parts);
  int rc = parts ? SP_EXIT_OK : SP_EXIT_INTERNAL;
  for (int i = 0; parts && i < n; i++) {
    parts[2 * i] = sp_adv_text(&adv[i], arch, cli->compiler);
    parts[2 * i + 1] = sp_adv_json(&adv[i], arch, cli->compiler);
    rows[i].advice_text = parts[2 * i];
    rows[i].advice_json = parts[2 * i + 1];
  }
  int top = cli->top > 0 ? cli->top : 10;
  if (rc == SP_EXIT_OK && cli->export_fixes) {
    char *y = sp_adv_export_fixes(adv, n, arch, cli->compiler);
    rc = y ? sp_write_output(cli->export_fixes, cli->force, y) : SP_EXIT_INTERNAL;
    free(y);
  }
  if (rc == SP_EXIT_OK && cli->fix != SP_ADV_FIX_NONE) {
    sp_adv_fix_options fo = {cli->fix, cli->output, !cli->no_backup, cli->force, cli->quiet};
    rc = sp_adv_fix_files(adv, n, &fo);
    *text = strdup(""); /* the fix is the output */
  } else if (rc == SP_EXIT_OK) {
    switch (cli->format) {
    case SP_FMT_JSON: *text = sp_report_json(rows, n, arch, top); break;
    case SP_FMT_SARIF: *text = sp_adv_sarif(adv, n, arch, cli->compiler); break;
    case SP_FMT_OPT_RECORD: *text = sp_adv_opt_record(adv, n, arch, cli->compiler); break;
    case SP_FMT_REMARKS: {
      char *r = sp_adv_remarks(adv, n, arch, cli->compiler);
      if (r && !cli->output) fputs(r, stderr); /* as a compiler's remarks */
      *text = r && cli->output ? r : (free(r), strdup(""));
      break;
    }
    default: {
      size_t len = 0;
      FILE *mem = open_memstream(text, &len);
      if (mem) {
        sp_report_text(mem, rows, n, arch, top);
        fclose(mem);
      }
    }
    }
  }
  for (int i = 0; parts && i < 2 * n; i++) free(parts[i]);
  free(parts);
  sp_adv_free(adv, n);
  return rc;
}

/* The schedules the chosen compiler can express: the ranking refines the best of them too. */
typedef struct sp_expressible_ctx {
  const sp_nest *nest;
  sp_adv_compiler compiler;
  const sp_arch *arch;
} sp_expressible_ctx;

static bool sp_expressible(const sp_schedule *s, void *ctx) {
  const sp_expressible_ctx *e = ctx;
  sp_adv_plan plan;
  return sp_adv_express(e->nest, s, e->compiler, &plan, NULL, 0) &&
         sp_adv_gangs_launch(e->nest, &plan, e->compiler, NULL, 0);
}

static double sp_lowering(const sp_schedule *s, const sp_trace_stats *st, void *ctx) {
  const sp_expressible_ctx *e = ctx;
  return sp_adv_lowering_s(e->nest, s, st, e->arch, e->compiler, NULL);
}

/* Ranks every nest and renders the report into *text. */
static int sp_rank_all(const sp_cli *cli, const sp_program *prog, char **text) {
  sp_arch arch;
  char err[1024];
  if (sp_arch_load(cli->arch ? cli->arch : "h100", &arch, err, sizeof err) != 0) {
    fprintf(stderr, "schedpredict: error: %s\n(--list-archs shows the descriptions there are)\n",
            err);
    return SP_EXIT_USAGE;
  }
  sp_rank_options ro;
  memset(&ro, 0, sizeof ro);
  ro.exact = cli->exact;
  ro.l1_variant = cli->l1_variant;
  ro.space.blocks = (const int(*)[3])cli->blocks;
  ro.space.nblocks = cli->nblocks;
  ro.space.gang_caps = cli->gangs;
  ro.space.ngang_caps = cli->ngangs;
  ro.space.gang_caps_absolute = true;
  ro.space.allow_interchange = true;
  ro.space.gcc_default = cli->compiler == SP_ADV_GCC;
  ro.space.registers = cli->registers;
  ro.vector_lengths = cli->vectors;
  ro.nvector_lengths = cli->nvectors;
  bool tty = isatty(fileno(stderr)) && !cli->quiet;
  sp_report_nest *rows = calloc((size_t)(prog->nnests ? prog->nnests : 1), sizeof *rows);
  sp_rank_result *results = calloc((size_t)(prog->nnests ? prog->nnests : 1), sizeof *results);
  char **errors = calloc((size_t)(prog->nnests ? prog->nnests : 1), sizeof *errors);
  if (!rows || !results || !errors) {
    free(rows);
    free(results);
    free(errors);
    return SP_EXIT_INTERNAL;
  }
  int ranked = 0, nrows = 0;
  for (int i = 0; i < prog->nnests; i++) {
    const sp_nest *n = &prog->nests[i];
    if (cli->nest_file && !sp_nest_at(n, cli->nest_file, cli->nest_line)) continue;
    char what[256];
    snprintf(what, sizeof what, "%s:%u: ranking", n->loc.file, n->loc.line);
    ro.progress = tty ? sp_progress : NULL;
    ro.progress_ctx = what;
    sp_expressible_ctx ectx = {n, cli->compiler, &arch};
    ro.refine_also = sp_expressible;
    ro.refine_also_ctx = &ectx;
    ro.lowering_s = sp_lowering;
    ro.lowering_ctx = &ectx;
    int r = nrows++;
    rows[r].nest = n;
    if (sp_rank_nest(n, &arch, &ro, &results[r], err, sizeof err) == 0) {
      rows[r].rank = &results[r];
      ranked++;
    } else {
      errors[r] = strdup(err);
      rows[r].error = errors[r];
      fprintf(stderr, "%s:%u:%u: warning: nest not ranked: %s\n", n->loc.file, n->loc.line,
              n->loc.col, err);
    }
  }
  int rc = SP_EXIT_OK;
  if (nrows == 0) {
    fprintf(stderr, "schedpredict: error: no loop nest at %s (the nests start at:", cli->nest_file);
    for (int i = 0; i < prog->nnests; i++)
      fprintf(stderr, " %s:%u", prog->nests[i].loc.file, prog->nests[i].loc.line);
    fputs(")\n", stderr);
    rc = SP_EXIT_NO_NESTS;
  } else {
    if (cli->emit_plan && ranked) rc = sp_emit_plan(cli, rows, nrows, &arch);
    if (rc == SP_EXIT_OK) rc = sp_advise(cli, rows, nrows, &arch, text);
  }
  for (int i = 0; i < nrows; i++) {
    sp_rank_result_free(&results[i]);
    free(errors[i]);
  }
  free(rows);
  free(results);
  free(errors);
  if (rc != SP_EXIT_OK) return rc;
  if (!*text) return SP_EXIT_INTERNAL;
  return rc;
}

static char *sp_with_newline(char *text) {
  if (!text) return NULL;
  size_t l = strlen(text);
  char *t = realloc(text, l + 2);
  if (!t) return text;
  strcpy(t + l, "\n");
  return t;
}

static char *sp_join_args(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  s[0] = 0;
  for (int i = 0; i < argc; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "compare") == 0) return sp_cmp_main(argc - 1, argv + 1, sp_write_output);
  sp_cli cli;
  memset(&cli, 0, sizeof cli);
  cli.l1_variant = SP_CM_L1_BASE; /* reproduces Hopper's measured L1 hits; see README */
  cli.plan.top = cli.plan.sample = -1;
  int rc = sp_parse_args(&cli, argc, argv);
  char *command = sp_join_args(argc, argv);
  cli.plan.command = command;
  if (rc == SP_EXIT_OK && cli.list_archs) {
    rc = sp_list_archs();
  } else if (rc == SP_EXIT_OK) {
    sp_diag diag;
    sp_diag_init(&diag, stderr);
    diag.quiet = cli.quiet;
    sp_program prog;
    memset(&prog, 0, sizeof prog);
    rc = sp_analyze(cli.files, cli.nfiles, &cli.opt, &diag, &prog);
    if (rc == SP_EXIT_OK) {
      char *text = NULL;
      if (cli.dump_ir) {
        text = sp_with_newline(sp_ir_to_json(&prog));
      } else if (cli.emit_harness) {
        text = sp_harness_source(cli.files[0], &cli.opt, &prog, &diag);
      } else if (cli.summary) {
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem) {
          sp_ir_print_summary(mem, &prog);
          fclose(mem);
        }
      } else {
        rc = sp_rank_all(&cli, &prog, &text);
      }
      if (!text && rc == SP_EXIT_OK) rc = SP_EXIT_INTERNAL;
      if (text && (cli.format == SP_FMT_JSON || cli.format == SP_FMT_SARIF))
        text = sp_with_newline(text);
      if (text) {
        bool to_file = cli.output && cli.fix == SP_ADV_FIX_NONE;
        int wrc = to_file ? sp_write_output(cli.output, cli.force, text)
                             : (fputs(text, stdout) < 0 ? SP_EXIT_INTERNAL : SP_EXIT_OK);
        if (rc == SP_EXIT_OK) rc = wrc;
      }
      free(text);
    }
    sp_program_free(&prog);
  }
  for (int i = 0; i < cli.nparams; i++) free(cli.params[i].name);
  free(cli.params);
  free(cli.files);
  free(cli.blocks);
  free(cli.gangs);
  free(cli.vectors);
  free(command);
  return rc;
}
