/* The plan: candidate selection by hand, and for the examples (sizes shrunk so a CPU can run
 * them) a CPU emulation of every planned kernel: the kernel source is compiled as C++ with g++
 * and a shim in which threadIdx / blockIdx / blockDim / gridDim are globals, then run over every
 * block and thread of the candidate's launch. Each candidate must visit every band iteration
 * exactly once (SP_ITERATION counts them), the same set as a sequential run of the nest, and
 * leave the written arrays bitwise equal to the sequential run (reductions within rounding).
 * The plan's sources also compile with NVRTC (as the runner compiles them: no system headers)
 * when libnvrtc loads, else with nvcc -arch=sm_90. The compilers are optional: their absence is
 * printed as SKIP. SP_PLAN_ONLY=NAME runs the examples
 * whose file name contains NAME. */
#include <ctype.h>
#include <dlfcn.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedpredict/analyzer.h"
#include "schedpredict/plan.h"
#include "tests/sp_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define SP_SANITIZED 1
#else
#define SP_SANITIZED 0
#endif

/* ---- selection --------------------------------------------------------------------------------- */

static void test_select(void) {
  enum { N = 100 };
  sp_rank_result r;
  memset(&r, 0, sizeof r);
  int order[N], out[N + 1];
  for (int i = 0; i < N; i++) order[i] = (i * 37) % N; /* candidate at rank i+1 */
  r.n = N;
  r.order = order;
  r.default_index = r.default_gcc = order[50];
  r.default_nvc = order[3];
  char desc[160];
  int k = sp_plan_select(&r, 20, 20, out, desc, sizeof desc);
  /* ranks 1..20, then 20 of ranks 21..100 evenly (21, 25.., 100), then the default (rank 51) */
  CHECK_EQ_INT(k, 41);
  for (int i = 0; i < 20; i++) CHECK_EQ_INT(out[i], order[i]);
  CHECK_EQ_INT(out[20], order[20]);  /* the first of the rest */
  CHECK_EQ_INT(out[39], order[99]);  /* the last */
  CHECK_EQ_INT(out[21], order[24]);  /* 20 + 1*79/19 = 24 */
  CHECK_EQ_INT(out[40], order[50]);
  CHECK_EQ_STR(desc, "top 20 + 20 evenly spaced of the remaining 80 (by rank) + the gcc default");
  /* both baselines outside the selection: both go in (out has n + 1 entries) */
  r.default_nvc = order[52];
  k = sp_plan_select(&r, 20, 20, out, desc, sizeof desc);
  CHECK_EQ_INT(k, 42);
  CHECK_EQ_INT(out[41], order[52]);
  CHECK_EQ_STR(desc, "top 20 + 20 evenly spaced of the remaining 80 (by rank) + the gcc default "
                     "+ the nvc default");
  r.default_index = r.default_gcc = r.default_nvc = order[3];
  k = sp_plan_select(&r, 20, 20, out, desc, sizeof desc);
  CHECK_EQ_INT(k, 40);
  CHECK_EQ_STR(desc, "top 20 + 20 evenly spaced of the remaining 80 (by rank)");
  r.n = 40;
  for (int i = 0; i < 40; i++) order[i] = 39 - i;
  k = sp_plan_select(&r, 20, 20, out, desc, sizeof desc);
  CHECK_EQ_INT(k, 40);
  CHECK_EQ_STR(desc, "all 40");
  CHECK_EQ_INT(out[0], 39);
  r.n = 41;
  for (int i = 0; i < 41; i++) order[i] = i;
  r.default_index = r.default_gcc = r.default_nvc = 0;
  k = sp_plan_select(&r, 20, 20, out, desc, sizeof desc);
  CHECK_EQ_INT(k, 40); /* the remaining 21 minus one: ranks 21..41 sampled 20 times, no repeats */
  k = sp_plan_select(&r, 0, 1, out, desc, sizeof desc);
  CHECK_EQ_INT(k, 1);
  CHECK_EQ_INT(out[0], 0); /* rank 1 is the first of the rest, and the default */
}

/* ---- examples ---------------------------------------------------------------------------------- */

typedef struct example {
  const char *file;
  const char *params[4]; /* NAME=VALUE */
  const char *args[4];   /* clang arguments */
  bool core;             /* in the default run; the rest with --all (ctest plan.examples) */
} example;

/* Sizes: every #define / enum integer of 64 or more becomes 24 + value % 11 (so sizes that differ
 * stay different); run-time sizes come small from params. */
static const example examples[] = {
    {"transpose.c", {0}, {0}, true},
    {"matmul.c", {0}, {0}, true},
    {"jacobi.c", {0}, {0}, true},
    {"laplacian.c", {0}, {"-DNX=20", "-DNY=21", "-DNZ=22"}, true},
    {"himeno.c", {0}, {0}, true},
    {"gemm.c", {"ni=20", "nj=21", "nk=22"}, {0}, true},
    {"syrk.c", {0}, {0}, true},
    {"collapse4.c", {"nbatch=2"}, {"-DCH=3"}, true},
    {"reverse_loop.c", {"nsys=37", "nlen=11"}, {0}, true},
    {"aos_particles.c", {0}, {0}, true},
    {"xreuse.c", {0}, {0}, true},
    {"yreuse.c", {0}, {0}, true},
    {"../tests/inputs/plan_forms.c", {"n=77"}, {0}, true},
    {"triangular.c", {0}, {0}, false},
    {"2mm.c", {0}, {0}, false},
    {"guarded_stencil.c", {0}, {0}, false},
    {"tile.c", {0}, {0}, false},
    {"enum_sizes.c", {0}, {0}, false},
    {"divergence.c", {0}, {0}, true},
    {"spmv_short_rows.c", {"nrows=50", "nnz=1350"}, {0}, false},
    {"atax.c", {"m=19", "n=21"}, {0}, false},
    {"bicg.c", {0}, {0}, false},
    {"mvt.c", {0}, {0}, false},
    {"gesummv.c", {0}, {0}, false},
    {"conv2d.c", {0}, {0}, false},
    {"conv3d.c", {0}, {0}, false},
    {"correlation.c", {0}, {0}, false},
    {"covariance.c", {0}, {0}, false},
    {"fdtd2d.c", {0}, {0}, false},
    {"heat3d.c", {0}, {"-DN=20"}, false},
    {"jacobi2d.c", {0}, {0}, false},
    {"kernels_region.c", {0}, {0}, false},
    {"gwv_explicit.c", {0}, {0}, false},
    {"colmajor_runtime.c", {"n=30", "m=31"}, {0}, false},
    {"omp_target.c", {0}, {0}, false},
    {"pointer_arith.c", {0}, {0}, false},
    {"syr2k.c", {0}, {0}, false},
    {"vla_param.c", {"n=30", "m=31"}, {0}, false},
};

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static char *shrink_sizes(const char *src) {
  size_t n = strlen(src);
  char *out = malloc(n + 1);
  if (!out) return NULL;
  size_t o = 0;
  bool define_line = false;
  for (size_t i = 0; i < n;) {
    bool line_start = i == 0 || src[i - 1] == '\n';
    if (line_start)
      define_line = strncmp(src + i, "#define", 7) == 0 || strncmp(src + i, "enum", 4) == 0;
    bool word_start = i == 0 || !(isalnum((unsigned char)src[i - 1]) || src[i - 1] == '_');
    if (define_line && word_start && isdigit((unsigned char)src[i])) {
      char *end;
      long long v = strtoll(src + i, &end, 10);
      if (!(isalnum((unsigned char)*end) || *end == '.' || *end == '_') && v >= 64) {
        o += (size_t)sprintf(out + o, "%lld", 24 + v % 11);
        i = (size_t)(end - src);
        continue;
      }
    }
    out[o++] = src[i++];
  }
  out[o] = 0;
  return out;
}

static bool have(const char *tool) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  return system(cmd) == 0;
}

static const char shim[] =
    "#include <math.h>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n"
    "#include <cstring>\n#include <limits>\n#include <map>\n#include <vector>\n"
    "struct sp_dim3 { unsigned x, y, z; };\n"
    "static sp_dim3 threadIdx, blockIdx, blockDim, gridDim;\n"
    "#define __global__\n#define __device__\n"
    "static long long __double_as_longlong(double d) { long long r; memcpy(&r, &d, 8); return r; }\n"
    "static double __longlong_as_double(long long v) { double r; memcpy(&r, &v, 8); return r; }\n"
    "static int __float_as_int(float f) { int r; memcpy(&r, &f, 4); return r; }\n"
    "static float __int_as_float(int v) { float r; memcpy(&r, &v, 4); return r; }\n"
    "template <class T> static T sp_cas(T *a, T c, T v) { T o = *a; if (o == c) *a = v; return o; }\n"
    "static int atomicCAS(int *a, int c, int v) { return sp_cas(a, c, v); }\n"
    "static unsigned atomicCAS(unsigned *a, unsigned c, unsigned v) { return sp_cas(a, c, v); }\n"
    "static unsigned long long atomicCAS(unsigned long long *a, unsigned long long c,\n"
    "                                    unsigned long long v) { return sp_cas(a, c, v); }\n"
    "template <class T> static T atomicAdd(T *a, T v) { T o = *a; *a = o + v; return o; }\n"
    "static std::map<std::vector<long long>, int> sp_visits;\n"
    "#define SP_ITERATION(...) (sp_visits[std::vector<long long>{__VA_ARGS__}]++)\n";

static const char harness[] =
    "template <class T> static T sp_identity(const char *op) {\n"
    "  typedef std::numeric_limits<T> L;\n"
    "  if (!strcmp(op, \"+\")) return 0;\n"
    "  if (!strcmp(op, \"*\")) return 1;\n"
    "  bool mx = !strcmp(op, \"max\");\n"
    "  if (L::has_infinity) return mx ? -L::infinity() : L::infinity();\n"
    "  return mx ? L::lowest() : L::max();\n"
    "}\n"
    "template <class T> static bool sp_close(T a, T b, double tol) {\n"
    "  if (a == b) return true;\n"
    "  double d = fabs((double)a - (double)b), m = fmax(fabs((double)a), fabs((double)b));\n"
    "  return d <= tol * m;\n"
    "}\n"
    "static void sp_fill(unsigned char *p, long long bytes, int esize, int kind, long long bound,\n"
    "                    unsigned long long pos) {\n"
    "  long long n = bytes / esize;\n"
    "  for (long long e = 0; e < n && kind != 2; e++) {\n"
    "    unsigned long long h = (unsigned long long)e * 2654435761ull;\n"
    "    if (kind == 0) {\n"
    "      double v = 0.5 + (double)((h + pos * 40503ull) % 1024) / 1024;\n"
    "      if (esize == 8) memcpy(p + e * 8, &v, 8);\n"
    "      else { float f = (float)v; memcpy(p + e * 4, &f, 4); }\n"
    "    } else {\n"
    "      unsigned long long b = bound > 0 ? (unsigned long long)bound : 7;\n"
    "      long long v = (long long)((h + pos) % b);\n"
    "      memcpy(p + e * esize, &v, (size_t)esize); /* little endian */\n"
    "    }\n"
    "  }\n"
    "  for (long long k = 0; k < bytes && kind == 2; k++) p[k] = (unsigned char)((k * 131 + pos) % 251);\n"
    "}\n"
    "#define SP_LAUNCH(call, gx, gy, gz, bx, by, bz) do { \\\n"
    "  gridDim = sp_dim3{gx, gy, gz}; blockDim = sp_dim3{bx, by, bz}; \\\n"
    "  for (blockIdx.z = 0; blockIdx.z < gz; blockIdx.z++) \\\n"
    "  for (blockIdx.y = 0; blockIdx.y < gy; blockIdx.y++) \\\n"
    "  for (blockIdx.x = 0; blockIdx.x < gx; blockIdx.x++) \\\n"
    "  for (threadIdx.z = 0; threadIdx.z < bz; threadIdx.z++) \\\n"
    "  for (threadIdx.y = 0; threadIdx.y < by; threadIdx.y++) \\\n"
    "  for (threadIdx.x = 0; threadIdx.x < bx; threadIdx.x++) call; } while (0)\n";

/* Writes the C++ emulation of one planned kernel: the sequential run first, then every candidate,
 * each compared with it. Returns false if the plan entry is malformed. */
static bool write_emulation(FILE *f, json_t *k, const sp_nest *nest, const char *seq_src) {
  json_t *arrays = json_object_get(k, "arrays"), *scalars = json_object_get(k, "scalars");
  json_t *reds = json_object_get(k, "reductions"), *params = json_object_get(k, "params");
  json_t *cands = json_object_get(k, "candidates");
  if (!json_is_array(arrays) || !json_is_array(params) || !json_is_array(cands)) return false;
  fputs(shim, f);
  fputs(json_string_value(json_object_get(k, "cuda_prelude")), f);
  fputs("\n", f);
  fputs(harness, f);
  fputs(seq_src, f);
  size_t i;
  json_t *c;
  json_array_foreach(cands, i, c) fprintf(f, "%s\n", json_string_value(json_object_get(c, "source")));
  size_t na = json_array_size(arrays), nr = json_array_size(reds);
  fprintf(f, "static unsigned char *buf[%zu + 1], *ref[%zu + 1];\n", na, na);
  json_t *r;
  json_array_foreach(reds, i, r) {
    const char *t = json_string_value(json_object_get(r, "type"));
    fprintf(f, "static %s red%zu, red%zu_ref;\n", t, i, i);
  }
  /* the argument list, from "params" */
  char args[4096] = "";
  size_t used = 0;
  json_t *p;
  json_array_foreach(params, i, p) {
    const char *s = json_string_value(p);
    const char *name = strchr(s, ':') + 1;
    char arg[256] = "";
    size_t j;
    json_t *e;
    if (strncmp(s, "array:", 6) == 0) {
      json_array_foreach(arrays, j, e) if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
        snprintf(arg, sizeof arg, "(%s *)buf[%zu]", json_string_value(json_object_get(e, "elem_type")), j);
    } else if (strncmp(s, "reduction:", 10) == 0) {
      json_array_foreach(reds, j, e) if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
        snprintf(arg, sizeof arg, "&red%zu", j);
    } else {
      json_array_foreach(scalars, j, e) if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
        snprintf(arg, sizeof arg, "(%s)%.17g", json_string_value(json_object_get(e, "type")),
                 json_number_value(json_object_get(e, "value")));
    }
    if (!arg[0]) return false;
    used += (size_t)snprintf(args + used, sizeof args - used, "%s%s", i ? ", " : "", arg);
  }
  fputs("static void sp_reset(void) {\n", f);
  json_t *a;
  json_array_foreach(arrays, i, a) {
    const char *init = json_string_value(json_object_get(a, "init"));
    int kind = strcmp(init, "float") == 0 ? 0 : strcmp(init, "int") == 0 ? 1 : 2;
    fprintf(f, "  sp_fill(buf[%zu], %lldLL, %d, %d, %lldLL, %zu);\n", i,
            (long long)json_integer_value(json_object_get(a, "bytes")),
            (int)json_integer_value(json_object_get(a, "elem_size")), kind,
            (long long)json_integer_value(json_object_get(a, "index_bound")), i);
  }
  json_array_foreach(reds, i, r)
    fprintf(f, "  red%zu = sp_identity<%s>(\"%s\");\n", i,
            json_string_value(json_object_get(r, "type")), json_string_value(json_object_get(r, "op")));
  fputs("  sp_visits.clear();\n}\n", f);
  fputs("static int sp_compare(const char *who, const std::map<std::vector<long long>, int> &v0) {\n"
        "  int bad = 0;\n"
        "  for (auto &kv : sp_visits) if (kv.second != 1) { bad++; break; }\n"
        "  if (bad) printf(\"%s: an iteration ran more than once\\n\", who);\n"
        "  if (sp_visits.size() != v0.size() || (!bad && sp_visits != v0)) {\n"
        "    printf(\"%s: %zu iterations, the sequential run %zu\\n\", who, sp_visits.size(), v0.size());\n"
        "    bad++;\n  }\n", f);
  json_array_foreach(arrays, i, a) {
    if (!json_is_true(json_object_get(a, "written"))) continue;
    fprintf(f, "  if (memcmp(buf[%zu], ref[%zu], %lldLL)) { printf(\"%%s: array %s differs\\n\", who); bad++; }\n",
            i, i, (long long)json_integer_value(json_object_get(a, "bytes")),
            json_string_value(json_object_get(a, "name")));
  }
  json_array_foreach(reds, i, r) {
    const char *t = json_string_value(json_object_get(r, "type"));
    fprintf(f, "  if (!sp_close(red%zu, red%zu_ref, %s)) { printf(\"%%s: reduction %s %%.17g vs %%.17g\\n\", who, (double)red%zu, (double)red%zu_ref); bad++; }\n",
            i, i, strcmp(t, "float") == 0 ? "1e-4" : "1e-10",
            json_string_value(json_object_get(r, "name")), i, i);
  }
  fputs("  return bad;\n}\n", f);
  fputs("int main(void) {\n", f);
  json_array_foreach(arrays, i, a) {
    long long bytes = (long long)json_integer_value(json_object_get(a, "bytes"));
    fprintf(f, "  buf[%zu] = (unsigned char *)calloc(%lld + 64, 1); ref[%zu] = (unsigned char *)calloc(%lld + 64, 1);\n",
            i, bytes, i, bytes);
  }
  fprintf(f, "  sp_reset();\n  SP_LAUNCH(sp_seq(%s), 1u, 1u, 1u, 1u, 1u, 1u);\n", args);
  fprintf(f, "  std::map<std::vector<long long>, int> v0 = sp_visits;\n");
  fprintf(f, "  for (auto &kv : v0) if (kv.second != 1) { printf(\"sequential run repeats an iteration\\n\"); return 1; }\n");
  json_array_foreach(arrays, i, a)
    fprintf(f, "  memcpy(ref[%zu], buf[%zu], %lld);\n", i, i,
            (long long)json_integer_value(json_object_get(a, "bytes")));
  for (size_t j = 0; j < nr; j++) fprintf(f, "  red%zu_ref = red%zu;\n", j, j);
  fputs("  int bad = 0;\n", f);
  json_array_foreach(cands, i, c) {
    json_t *g = json_object_get(c, "grid"), *b = json_object_get(c, "block");
    fprintf(f, "  sp_reset();\n  SP_LAUNCH(%s(%s), %lldu, %lldu, %lldu, %lldu, %lldu, %lldu);\n",
            json_string_value(json_object_get(c, "kernel_name")), args,
            (long long)json_integer_value(json_array_get(g, 0)),
            (long long)json_integer_value(json_array_get(g, 1)),
            (long long)json_integer_value(json_array_get(g, 2)),
            (long long)json_integer_value(json_array_get(b, 0)),
            (long long)json_integer_value(json_array_get(b, 1)),
            (long long)json_integer_value(json_array_get(b, 2)));
    fprintf(f, "  bad += sp_compare(\"%s (%s)\", v0);\n",
            json_string_value(json_object_get(c, "kernel_name")),
            json_string_value(json_object_get(c, "cuda_mapping")));
  }
  fprintf(f, "  printf(\"%%zu iterations, %zu candidates, %%d differ\\n\", v0.size(), bad);\n",
          json_array_size(cands));
  fputs("  return bad != 0;\n}\n", f);
  (void)nest;
  return true;
}

/* Sequential schedule: every band loop unmapped, one thread. */
static char *sequential_source(const sp_nest *nest, const sp_schedule *like) {
  sp_schedule s = *like;
  for (int k = 0; k < s.nband; k++) s.map[k] = (sp_loop_map){-1, -1};
  s.collapse_first = s.collapse_count = 0;
  return sp_plan_kernel_source(nest, &s, "sp_seq");
}

static int run_cmd(const char *cmd, const char *log) {
  char full[4096];
  snprintf(full, sizeof full, "%s > %s 2>&1", cmd, log);
  int rc = system(full);
  return rc;
}

static void show(const char *log) {
  char *t = read_text(log);
  if (t) fprintf(stderr, "%.3000s\n", t);
  free(t);
}

static int emulated, compiled, planned_kernels, skipped_kernels;

/* NVRTC through dlopen (the library is optional); the prototypes of nvrtc.h, results as int. */
typedef struct sp_nvrtc_prog *sp_nvrtc_program;
static struct {
  int (*create)(sp_nvrtc_program *, const char *, const char *, int, const char *const *,
                const char *const *);
  int (*compile)(sp_nvrtc_program, int, const char *const *);
  int (*log_size)(sp_nvrtc_program, size_t *);
  int (*log)(sp_nvrtc_program, char *);
  int (*destroy)(sp_nvrtc_program *);
} nvrtc;

static bool load_nvrtc(void) {
  static const char *const libs[] = {"libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof libs / sizeof *libs && !h; i++) h = dlopen(libs[i], RTLD_NOW);
  if (!h) return false;
  *(void **)&nvrtc.create = dlsym(h, "nvrtcCreateProgram");
  *(void **)&nvrtc.compile = dlsym(h, "nvrtcCompileProgram");
  *(void **)&nvrtc.log_size = dlsym(h, "nvrtcGetProgramLogSize");
  *(void **)&nvrtc.log = dlsym(h, "nvrtcGetProgramLog");
  *(void **)&nvrtc.destroy = dlsym(h, "nvrtcDestroyProgram");
  return nvrtc.create && nvrtc.compile && nvrtc.log_size && nvrtc.log && nvrtc.destroy;
}

/* 0 when the source compiles for sm_90; else prints the log. */
static int nvrtc_compile(const char *src, const char *name) {
  sp_nvrtc_program prog;
  if (nvrtc.create(&prog, src, name, 0, NULL, NULL) != 0) return -1;
  const char *opts[] = {"--gpu-architecture=compute_90"};
  int rc = nvrtc.compile(prog, 1, opts);
  if (rc != 0) {
    size_t n = 0;
    nvrtc.log_size(prog, &n);
    char *log = malloc(n + 1);
    if (log && nvrtc.log(prog, log) == 0) fprintf(stderr, "%.3000s\n", log);
    free(log);
  }
  nvrtc.destroy(&prog);
  return rc;
}

static void plan_example(const example *ex, const sp_arch *arch, const char *dir, bool gxx,
                         const char *nvcc) {
  char path[512];
  snprintf(path, sizeof path, "examples/%s", ex->file);
  const char *slash = strrchr(ex->file, '/');
  const char *short_name = slash ? slash + 1 : ex->file;
  char *orig = read_text(path);
  if (!orig) return; /* an example another branch has not got */
  char *src = shrink_sizes(orig);
  free(orig);
  sp_param params[4];
  int np = 0;
  for (int i = 0; i < 4 && ex->params[i]; i++) {
    const char *eq = strchr(ex->params[i], '=');
    params[np].name = strndup(ex->params[i], (size_t)(eq - ex->params[i]));
    params[np++].value = strtoll(eq + 1, NULL, 10);
  }
  int nargs = 0;
  while (nargs < 4 && ex->args[nargs]) nargs++;
  sp_analyzer_options opt;
  memset(&opt, 0, sizeof opt);
  opt.params = params;
  opt.nparams = np;
  opt.clang_args = ex->args;
  opt.nclang_args = nargs;
  opt.unsaved_contents = src;
  opt.unsaved_length = strlen(src);
  sp_diag diag;
  sp_diag_init(&diag, NULL);
  sp_program prog;
  memset(&prog, 0, sizeof prog);
  const char *files[] = {path};
  int rc = sp_analyze(files, 1, &opt, &diag, &prog);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "  %s does not analyze\n", ex->file);
  sp_report_nest *rows = calloc((size_t)prog.nnests + 1, sizeof *rows);
  sp_rank_result *res = calloc((size_t)prog.nnests + 1, sizeof *res);
  static const int64_t caps[] = {3};
  sp_rank_options ro;
  memset(&ro, 0, sizeof ro);
  ro.space.gang_caps = caps;
  ro.space.ngang_caps = 1;
  ro.space.gang_caps_absolute = true;
  ro.space.allow_interchange = true;
  char err[512];
  for (int i = 0; i < prog.nnests; i++) {
    rows[i].nest = &prog.nests[i];
    if (sp_rank_nest(&prog.nests[i], arch, &ro, &res[i], err, sizeof err) == 0) rows[i].rank = &res[i];
    else rows[i].error = "not ranked";
  }
  sp_plan_options po = {12, 12, "test_plan"};
  char *text = sp_plan_json(rows, prog.nnests, arch, &po, &diag);
  CHECK(text != NULL);
  json_error_t jerr;
  json_t *plan = text ? json_loads(text, 0, &jerr) : NULL;
  CHECK(plan != NULL);
  json_t *kernels = json_object_get(plan, "kernels");
  skipped_kernels += (int)json_array_size(json_object_get(plan, "skipped"));
  size_t ki;
  json_t *k;
  json_array_foreach(kernels, ki, k) {
    planned_kernels++;
    int line = (int)json_integer_value(json_object_get(k, "line"));
    const sp_nest *nest = NULL;
    int ni = -1;
    for (int i = 0; i < prog.nnests; i++)
      if ((int)prog.nests[i].loc.line == line) nest = &prog.nests[i], ni = i;
    CHECK(nest != NULL);
    if (!nest) continue;
    json_t *cands = json_object_get(k, "candidates");
    CHECK(json_array_size(cands) >= 1);
    /* the reference is the compiler default, and it is in the plan */
    bool has_ref = false;
    size_t ci;
    json_t *c;
    json_array_foreach(cands, ci, c) {
      has_ref |= json_integer_value(json_object_get(c, "id")) ==
                 json_integer_value(json_object_get(k, "reference"));
      CHECK(json_is_string(json_object_get(c, "source")));
    }
    CHECK(has_ref);
    char base[600], cmd[3072], log[640];
    snprintf(base, sizeof base, "%s/%.*s_%d", dir, (int)(strlen(short_name) - 2), short_name,
             line);
    snprintf(log, sizeof log, "%s.log", base);
    if (nvcc && strcmp(nvcc, "nvrtc") == 0) {
      /* as the runner does it: prelude + one candidate's source */
      int bad = 0;
      const char *prelude = json_string_value(json_object_get(k, "cuda_prelude"));
      json_array_foreach(cands, ci, c) {
        const char *one = json_string_value(json_object_get(c, "source"));
        char *full = malloc(strlen(prelude) + strlen(one) + 2);
        if (!full) continue;
        sprintf(full, "%s\n%s", prelude, one);
        if (nvrtc_compile(full, base) != 0) bad++;
        free(full);
      }
      CHECK_EQ_INT(bad, 0);
      if (bad) fprintf(stderr, "  NVRTC failed on %d candidates of %s:%d\n", bad, short_name, line);
      compiled++;
    } else if (nvcc) {
      char cu[640];
      snprintf(cu, sizeof cu, "%s.cu", base);
      FILE *f = fopen(cu, "w");
      if (f) {
        fprintf(f, "%s\n", json_string_value(json_object_get(k, "cuda_prelude")));
        json_array_foreach(cands, ci, c) fprintf(f, "%s\n", json_string_value(json_object_get(c, "source")));
        fclose(f);
      }
      snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -c -o %s.o %s", nvcc, base, cu);
      int crc = run_cmd(cmd, log);
      CHECK_EQ_INT(crc, 0);
      if (crc) {
        fprintf(stderr, "  nvcc failed on %s:%d\n", short_name, line);
        show(log);
      }
      compiled++;
    }
    if (!gxx) continue;
    char cpp[640], *seq = sequential_source(nest, &res[ni].candidates[res[ni].default_index].schedule);
    snprintf(cpp, sizeof cpp, "%s.cpp", base);
    FILE *f = fopen(cpp, "w");
    bool ok = f && seq && write_emulation(f, k, nest, seq);
    if (f) fclose(f);
    free(seq);
    CHECK(ok);
    if (!ok) continue;
    snprintf(cmd, sizeof cmd, "g++ -std=c++17 -O1 -w -o %s.exe %s && %s.exe", base, cpp, base);
    int erc = run_cmd(cmd, log);
    CHECK_EQ_INT(erc, 0);
    char *out = read_text(log);
    fprintf(stderr, "  %s:%d: %s", short_name, line, out && erc == 0 ? out : "FAILED\n");
    if (erc) show(log);
    free(out);
    emulated++;
  }
  json_decref(plan);
  free(text);
  for (int i = 0; i < prog.nnests; i++) sp_rank_result_free(&res[i]);
  free(res);
  free(rows);
  sp_program_free(&prog);
  for (int i = 0; i < np; i++) free(params[i].name);
  free(src);
}

/* ---- golden sources ---------------------------------------------------------------------------- */

typedef struct golden_schedule {
  const char *file;
  int nest;
  const char *what;
  sp_loop_map map[3];
  int collapse_first, collapse_count;
  int block[3];
  int64_t grid[3];
} golden_schedule;

/* Hand-made schedules (independent of the schedule space and of the model): the generated text
 * is checked against tests/golden/NAME.plan.cu (SP_UPDATE_GOLDEN=1 rewrites it; review the diff). */
static const golden_schedule goldens[] = {
    {"transpose.c", 0, "2_3: j->tx+bx i->ty+by", {{1, 1}, {0, 0}}, 0, 0, {32, 8, 1}, {128, 512, 1}},
    {"transpose.c", 0, "collapse(2) on tx+bx, grid-strided", {{0, 0}, {-1, -1}}, 0, 2, {128, 1, 1}, {264, 1, 1}},
    {"transpose.c", 0, "sequential", {{-1, -1}, {-1, -1}}, 0, 0, {1, 1, 1}, {1, 1, 1}},
    {"jacobi.c", 0, "2_2 with a max reduction: i->tx+bx j->by", {{-1, 1}, {0, 0}}, 0, 0, {128, 1, 1}, {32, 4094, 1}},
    {"syrk.c", 0, "2_1 triangular: j->tx i->bx", {{-1, 0}, {0, -1}}, 0, 0, {256, 1, 1}, {1200, 1, 1}},
    {"reverse_loop.c", 1, "negative steps: j->tx+bx i->by", {{-1, 1}, {0, 0}}, 0, 0, {128, 1, 1}, {512, 256, 1}},
    {"aos_particles.c", 0, "structs: i->tx+bx", {{0, 0}}, 0, 0, {128, 1, 1}, {128, 1, 1}},
    /* SP_LANE_LOOP: on i, and on j whose bound differs between i's lanes; on neither when i is
     * on blocks only */
    {"triangular.c", 0, "i->tx+bx, j (<= i) whole in each thread", {{0, 0}, {-1, -1}}, 0, 0, {128, 1, 1}, {32, 1, 1}},
    {"triangular.c", 0, "i->bx, j (<= i) whole in each thread", {{-1, 0}, {-1, -1}}, 0, 0, {1, 1, 1}, {4096, 1, 1}},
};

static void test_golden_sources(void) {
  const char *last = NULL;
  FILE *out = NULL;
  char *expected = NULL, *actual = NULL;
  size_t alen = 0;
  char gpath[256] = "";
  sp_program prog;
  memset(&prog, 0, sizeof prog);
  bool update = getenv("SP_UPDATE_GOLDEN") != NULL;
  for (size_t g = 0; g <= sizeof goldens / sizeof *goldens; g++) {
    const golden_schedule *gs = g < sizeof goldens / sizeof *goldens ? &goldens[g] : NULL;
    if (last && (!gs || strcmp(gs->file, last) != 0)) { /* finish the previous file */
      fclose(out);
      if (update) {
        FILE *f = fopen(gpath, "w");
        if (f) {
          fputs(actual, f);
          fclose(f);
        }
      } else {
        expected = read_text(gpath);
        CHECK(expected != NULL);
        CHECK(expected && strcmp(expected, actual) == 0);
        if (expected && strcmp(expected, actual) != 0)
          fprintf(stderr, "  %s differs from the generated text:\n%s\n", gpath, actual);
        free(expected);
      }
      free(actual);
      sp_program_free(&prog);
      last = NULL;
    }
    if (!gs) break;
    if (!last) {
      last = gs->file;
      char path[256];
      snprintf(path, sizeof path, "examples/%s", gs->file);
      snprintf(gpath, sizeof gpath, "tests/golden/%.*s.plan.cu", (int)(strlen(gs->file) - 2),
               gs->file);
      char *src = read_text(path);
      const char *line = src ? strstr(src, "schedpredict-args:") : NULL;
      sp_param params[4];
      int np = 0;
      for (const char *p = line ? strstr(line, "--param ") : NULL; p && np < 4 && p < strchr(line, '\n');
           p = strstr(p + 1, "--param ")) {
        const char *name = p + 8, *eq = strchr(name, '=');
        params[np].name = strndup(name, (size_t)(eq - name));
        params[np++].value = strtoll(eq + 1, NULL, 10);
      }
      free(src);
      sp_analyzer_options opt;
      memset(&opt, 0, sizeof opt);
      opt.params = params;
      opt.nparams = np;
      sp_diag diag;
      sp_diag_init(&diag, NULL);
      const char *files[] = {path};
      CHECK_EQ_INT(sp_analyze(files, 1, &opt, &diag, &prog), 0);
      for (int i = 0; i < np; i++) free(params[i].name);
      out = open_memstream(&actual, &alen);
      if (prog.nnests > gs->nest) {
        char *prelude = sp_plan_prelude(&prog.nests[gs->nest]);
        fprintf(out, "%s", prelude ? prelude : "");
        free(prelude);
      }
    }
    CHECK(prog.nnests > gs->nest);
    if (prog.nnests <= gs->nest) continue;
    const sp_nest *nest = &prog.nests[gs->nest];
    sp_schedule s;
    memset(&s, 0, sizeof s);
    while (s.nband < nest->nloops && nest->loops[s.nband].band) s.nband++;
    for (int k = 0; k < s.nband; k++) s.map[k] = k < 3 ? gs->map[k] : (sp_loop_map){-1, -1};
    s.collapse_first = gs->collapse_first;
    s.collapse_count = gs->collapse_count;
    memcpy(s.block, gs->block, sizeof s.block);
    memcpy(s.grid, gs->grid, sizeof s.grid);
    char name[64];
    snprintf(name, sizeof name, "golden_%zu", g);
    char *src = sp_plan_kernel_source(nest, &s, name);
    CHECK(src != NULL);
    fprintf(out, "\n// %s, block %dx%dx%d, grid %lldx%lldx%lld\n%s", gs->what, s.block[0], s.block[1],
            s.block[2], (long long)s.grid[0], (long long)s.grid[1], (long long)s.grid[2],
            src ? src : "");
    free(src);
  }
}

static bool all_examples;

static void test_examples(void) {
  sp_arch arch;
  char err[512];
  CHECK_EQ_INT(sp_arch_load("h100", &arch, err, sizeof err), 0);
  bool gxx = have("g++");
  const char *nvcc = !SP_SANITIZED && load_nvrtc() ? "nvrtc"
                     : have("nvcc")                   ? "nvcc"
                     : access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc"
                                                                     : NULL;
  if (!gxx) fprintf(stderr, "SKIP: g++ not found: no CPU emulation of the generated kernels\n");
  if (!nvcc)
    fprintf(stderr, "SKIP: neither NVRTC nor nvcc found: the plan's CUDA sources are not compiled\n");
  if (SP_SANITIZED) nvcc = NULL; /* the plain build compiles them; here only the library runs */
  char dir[] = "/tmp/sp_test_plan.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  size_t n = 0;
  for (size_t i = 0; i < sizeof examples / sizeof *examples; i++) {
    if (!all_examples && !examples[i].core) continue;
    /* under the sanitizers, one example of each code path: plain, reduction, clause sizes, forms */
    static const char *const san_subset[] = {"transpose.c", "jacobi.c", "divergence.c", "plan_forms.c"};
    bool in_subset = false;
    for (size_t j = 0; j < sizeof san_subset / sizeof *san_subset; j++)
      in_subset |= strstr(examples[i].file, san_subset[j]) != NULL;
    if (SP_SANITIZED && !all_examples && !in_subset) continue;
    if (getenv("SP_PLAN_ONLY") && !strstr(examples[i].file, getenv("SP_PLAN_ONLY"))) continue;
    plan_example(&examples[i], &arch, dir, gxx, nvcc);
    n++;
  }
  fprintf(stderr, "  %d kernels planned (%d skipped), %d emulated, %d compiled with %s\n",
          planned_kernels, skipped_kernels, emulated, compiled, nvcc ? nvcc : "nothing");
  CHECK(planned_kernels >= (int)n);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (sp_test_failures == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv) {
  all_examples = argc > 1 && strcmp(argv[1], "--all") == 0;
  SP_RUN(test_select);
  SP_RUN(test_golden_sources);
  SP_RUN(test_examples);
  fprintf(stderr, "%d checks, %d failures\n", sp_test_checks, sp_test_failures);
  return sp_test_failures != 0;
}
