/* The plan (validation/FORMATS.md): per nest, the CUDA kernel of each selected candidate. A kernel
 * implements exactly the mapping the trace generator models (include/schedpredict/traces.h): the
 * band loops in their source order as strided for-loops around the body's source text; a loop on
 * thread dim d and block dim e starts at lower + step * (threadIdx.d + blockIdx.e * blockDim.d)
 * and advances by step * blockDim.d * gridDim.e; a collapse group is one fused index, outermost
 * loop slowest; unmapped loops run whole in every thread. Loops whose trip count can differ
 * between a warp's lanes are not unrolled (sp_plan_lane_loops), so that a warp instruction holds
 * one iteration of its lanes, as the trace does. */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedpredict/plan.h"

/* ---- text -------------------------------------------------------------------------------------- */

typedef struct sp_text {
  char *s;
  size_t n, cap;
  bool failed;
} sp_text;

static void sp_text_add(sp_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sp_text_add(sp_text *t, const char *fmt, ...) {
  if (t->failed) return;
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) {
    t->failed = true;
    return;
  }
  if (t->n + (size_t)need + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->n + (size_t)need + 1) cap *= 2;
    char *g = realloc(t->s, cap);
    if (!g) {
      t->failed = true;
      return;
    }
    t->s = g;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
  va_end(ap);
  t->n += (size_t)need;
}

static char *sp_text_take(sp_text *t) {
  if (t->failed) {
    free(t->s);
    return NULL;
  }
  return t->s ? t->s : strdup("");
}

/* ---- reductions -------------------------------------------------------------------------------- */

/* How a reduction type is combined atomically: native atomicAdd for `+` where CUDA has one
 * (sp_cg_atomic_add_native), else a compare-and-swap loop on an integer of the same size
 * (to/from convert the bits). */
typedef struct sp_red_type {
  const char *type, *bits, *to_bits, *from_bits, *lowest, *highest;
} sp_red_type;

static const sp_red_type sp_red_types[] = {
    {"double", "unsigned long long", "__double_as_longlong", "__longlong_as_double",
     "__longlong_as_double(0xfff0000000000000ULL)", "__longlong_as_double(0x7ff0000000000000ULL)"},
    {"float", "int", "__float_as_int", "__int_as_float", "__int_as_float((int)0xff800000u)",
     "__int_as_float(0x7f800000)"},
    {"int", "int", "(int)", "(int)", "(-2147483647 - 1)", "2147483647"},
    {"unsigned int", "unsigned int", "(unsigned int)", "(unsigned int)", "0u", "0xffffffffu"},
    {"long", "unsigned long long", "(unsigned long long)", "(long)", "(-9223372036854775807L - 1)",
     "9223372036854775807L"},
    {"unsigned long", "unsigned long long", "(unsigned long long)", "(unsigned long)", "0ul",
     "0xfffffffffffffffful"},
    {"long long", "unsigned long long", "(unsigned long long)", "(long long)",
     "(-9223372036854775807LL - 1)", "9223372036854775807LL"},
    {"unsigned long long", "unsigned long long", "(unsigned long long)", "(unsigned long long)",
     "0ull", "0xffffffffffffffffull"},
};

static const sp_red_type *sp_red_type_of(const char *type) {
  for (size_t i = 0; i < sizeof sp_red_types / sizeof *sp_red_types; i++)
    if (strcmp(sp_red_types[i].type, type) == 0) return &sp_red_types[i];
  return NULL;
}

static const char *sp_red_name(const char *op) {
  return strcmp(op, "+") == 0 ? "add" : strcmp(op, "*") == 0 ? "mul" : op;
}

/* "sp_atomic_max_unsigned_int" */
static void sp_red_helper_name(const sp_cg_var *v, char *buf, size_t n) {
  int w = snprintf(buf, n, "sp_atomic_%s_%s", sp_red_name(v->op), v->type);
  for (int i = 0; i < w && (size_t)i < n; i++)
    if (buf[i] == ' ') buf[i] = '_';
}

static const char *sp_red_identity(const sp_cg_var *v) {
  const sp_red_type *rt = sp_red_type_of(v->type);
  if (strcmp(v->op, "+") == 0) return "0";
  if (strcmp(v->op, "*") == 0) return "1";
  return strcmp(v->op, "max") == 0 ? rt->lowest : rt->highest;
}

/* A float sum or product accumulates in double in each thread. A schedule that gives one thread
 * millions of terms would otherwise lose digits that another schedule keeps (seen on the H100:
 * himeno's float gosa differed by 6 % between schedules), and the check is of the mapping, not of
 * float rounding. The per-thread result is rounded to float when it is combined. */
static const char *sp_red_accumulator_type(const sp_cg_var *v) {
  bool sum_or_product = strcmp(v->op, "+") == 0 || strcmp(v->op, "*") == 0;
  return sum_or_product && strcmp(v->type, "float") == 0 ? "double" : v->type;
}

static bool sp_has_reduction(const sp_codegen *cg) {
  for (int i = 0; i < cg->nvars; i++)
    if (cg->vars[i].kind == SP_CG_REDUCTION) return true;
  return false;
}

static void sp_red_helper(sp_text *t, const sp_cg_var *v) {
  const sp_red_type *rt = sp_red_type_of(v->type);
  char name[96];
  sp_red_helper_name(v, name, sizeof name);
  const char *combine = strcmp(v->op, "+") == 0   ? "cur + v"
                        : strcmp(v->op, "*") == 0 ? "cur * v"
                        : strcmp(v->op, "max") == 0 ? "cur > v ? cur : v"
                                                    : "cur < v ? cur : v";
  sp_text_add(t,
              "static __device__ void %s(%s *p, %s v) {\n"
              "  %s *a = (%s *)p;\n"
              "  %s old = *a, assumed;\n"
              "  do {\n"
              "    assumed = old;\n"
              "    %s cur = %s(assumed);\n"
              "    %s next = %s;\n"
              "    old = atomicCAS(a, assumed, %s(next));\n"
              "  } while (old != assumed);\n"
              "}\n",
              name, v->type, v->type, rt->bits, rt->bits, rt->bits, v->type, rt->from_bits,
              v->type, combine, rt->to_bits);
}

/* ---- what can be generated --------------------------------------------------------------------- */

const char *sp_plan_not_generated(const sp_nest *nest, sp_srcloc *loc) {
  static const char missing[] = "the analyzer collected no code-generation data for this nest";
  static const char red_type[] =
      "a reduction variable has a type CUDA has no atomic for (use int, long, float or double)";
  *loc = nest->loc;
  const sp_codegen *cg = nest->codegen;
  if (!cg || !cg->body) return missing;
  if (cg->not_generated) {
    *loc = cg->not_generated_loc;
    return cg->not_generated;
  }
  for (int i = 0; i < cg->nvars; i++)
    if (cg->vars[i].kind == SP_CG_REDUCTION && !sp_red_type_of(cg->vars[i].type)) return red_type;
  return NULL;
}

char *sp_plan_prelude(const sp_nest *nest) {
  const sp_codegen *cg = nest->codegen;
  sp_text t = {0};
  sp_text_add(&t, "// %s:%u (%s), generated by schedpredict\n", nest->loc.file, nest->loc.line,
              nest->function);
  sp_text_add(&t, "#ifndef SP_ITERATION\n#define SP_ITERATION(...) ((void)0)\n#endif\n");
  /* see sp_plan_lane_loops */
  sp_text_add(&t, "#ifndef SP_LANE_LOOP\n#ifdef __CUDACC__\n#define SP_LANE_LOOP _Pragma(\"unroll 1\")\n"
                  "#else\n#define SP_LANE_LOOP\n#endif\n#endif\n");
  /* C's restrict in the body's declarations; CUDA C++ spells it __restrict__ */
  sp_text_add(&t, "#ifndef restrict\n#define restrict __restrict__\n#endif\n");
  if (cg && cg->prelude) sp_text_add(&t, "%s", cg->prelude);
  for (int i = 0; cg && i < cg->nvars; i++) {
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind != SP_CG_REDUCTION || sp_cg_atomic_add_native(v) || !sp_red_type_of(v->type)) continue;
    bool dup = false;
    for (int j = 0; j < i; j++)
      dup |= cg->vars[j].kind == SP_CG_REDUCTION && strcmp(cg->vars[j].op, v->op) == 0 &&
             strcmp(cg->vars[j].type, v->type) == 0;
    if (!dup) sp_red_helper(&t, v);
  }
  return sp_text_take(&t);
}

/* ---- the kernel -------------------------------------------------------------------------------- */

static const char sp_dims[] = "xyz";

static int64_t sp_const_trip(const sp_loop *l) {
  int64_t lo = l->lower.constant, hi = l->upper.constant, st = l->step;
  if (st > 0) return hi < lo ? 0 : (hi - lo) / st + 1;
  return hi > lo ? 0 : (lo - hi) / -st + 1;
}

/* First position and stride of a mapped loop, in units of its step; `wide` in 64 bits, else in
 * CUDA's unsigned int (the caller knows they fit). */
static void sp_map_exprs(const sp_loop_map *m, bool wide, char *p0, char *st, size_t n) {
  int d = m->thread_dim, e = m->block_dim;
  const char *cast = wide ? "(long long)" : "";
  if (d >= 0 && e >= 0) {
    snprintf(p0, n, "%sblockIdx.%c * blockDim.%c + threadIdx.%c", cast, sp_dims[e], sp_dims[d],
             sp_dims[d]);
    snprintf(st, n, "%sblockDim.%c * gridDim.%c", cast, sp_dims[d], sp_dims[e]);
  } else if (d >= 0) {
    snprintf(p0, n, "%sthreadIdx.%c", cast, sp_dims[d]);
    snprintf(st, n, "%sblockDim.%c", cast, sp_dims[d]);
  } else if (e >= 0) {
    snprintf(p0, n, "%sblockIdx.%c", cast, sp_dims[e]);
    snprintf(st, n, "%sgridDim.%c", cast, sp_dims[e]);
  } else {
    snprintf(p0, n, wide ? "0LL" : "0u");
    snprintf(st, n, wide ? "1LL" : "1u");
  }
}

/* Threads a mapped loop spreads over (the stride of its grid-stride loop). */
static int64_t sp_map_threads(const sp_loop_map *m, const sp_schedule *s) {
  return (m->thread_dim >= 0 ? s->block[m->thread_dim] : 1) *
         (m->block_dim >= 0 ? s->grid[m->block_dim] : 1);
}

static void sp_indent(sp_text *t, int depth) { sp_text_add(t, "%*s", 2 * depth, ""); }

static const char *sp_index_type(const sp_codegen *cg, int k) {
  return cg->index_type[k] ? cg->index_type[k] : "int";
}

static void sp_scalar_literal(char *buf, size_t n, const sp_cg_var *v) {
  if (v->floating) snprintf(buf, n, "%.17g", v->value);
  else snprintf(buf, n, "%lld", (long long)v->value);
}

/* v combined across its warp with shuffles: lane 0 ends with the warp's value. */
static void sp_warp_combine(sp_text *t, const sp_cg_var *v) {
  const char *op = strcmp(v->op, "+") == 0   ? "%s + sp_o_%s"
                   : strcmp(v->op, "*") == 0 ? "%s * sp_o_%s"
                   : strcmp(v->op, "max") == 0 ? "(%s > sp_o_%s ? %s : sp_o_%s)"
                                               : "(%s < sp_o_%s ? %s : sp_o_%s)";
  char combine[256];
  snprintf(combine, sizeof combine, op, v->name, v->name, v->name, v->name);
  sp_text_add(t, "  for (int sp_off = 16; sp_off > 0; sp_off /= 2) {\n"
                 "    %s sp_o_%s = __shfl_down_sync(0xffffffffu, %s, sp_off);\n"
                 "    %s = %s;\n"
                 "  }\n",
              sp_red_accumulator_type(v), v->name, v->name, v->name, combine);
}

/* The band loops whose trip count can differ between the lanes of a warp: those on a thread
 * dimension (a collapse group by its first loop's mapping) and those whose bounds use such a
 * loop's index. The kernel keeps them from being unrolled (SP_LANE_LOOP). nvcc unrolls a
 * grid-stride loop 4x and runs the remainder first, so lanes with one iteration fewer run three
 * iterations ahead of the others: every warp instruction then holds two iterations, a store's
 * sectors are split and completed later. The model, like an OpenACC compiler's vector loop,
 * keeps a warp's lanes on one iteration. Measured on the H100 (validation/results/h100/
 * 2026-11-23-partial-gap-probe/): jacobi2d's 64x4 rows-walking candidate took 163 us unrolled, 109
 * not; 32x16 ones 205 against 127. */
static void sp_plan_lane_loops(const sp_nest *nest, const sp_schedule *s, bool *lane) {
  for (int k = 0; k < s->nband; k++) {
    const sp_loop_map *m = &s->map[sp_schedule_collapsed_away(s, k) ? s->collapse_first : k];
    lane[k] = m->thread_dim >= 0;
    for (int j = 0; j < k; j++)
      lane[k] |= lane[j] && (nest->loops[k].lower.coef[j] != 0 || nest->loops[k].upper.coef[j] != 0);
  }
}

/* The band loops the generated kernel writes as loops: those before the first imperfect one (the
 * body as written, under the last of them, holds the rest). */
static int sp_plan_band(const sp_nest *nest, int nband) {
  int k = 0;
  while (k < nband && k < nest->nloops && !nest->loops[k].imperfect) k++;
  return k;
}

bool sp_plan_generates(const sp_nest *nest, const sp_schedule *s) {
  for (int k = sp_plan_band(nest, s->nband); k < s->nband; k++)
    if (s->map[k].thread_dim >= 0 || s->map[k].block_dim >= 0) return false;
  return true;
}

char *sp_plan_kernel_source(const sp_nest *nest, const sp_schedule *s, const char *name) {
  sp_srcloc loc;
  if (sp_plan_not_generated(nest, &loc) || !sp_plan_generates(nest, s)) return NULL;
  const sp_codegen *cg = nest->codegen;
  int nband = sp_plan_band(nest, s->nband);
  sp_text t = {0};
  sp_text_add(&t, "extern \"C\" __global__ void %s(", name);
  int np = 0;
  for (int kind = SP_CG_ARRAY; kind >= SP_CG_SCALAR; kind--) /* arrays, reductions, scalars */
    for (int i = 0; i < cg->nvars; i++) {
      const sp_cg_var *v = &cg->vars[i];
      if ((int)v->kind != kind || kind == SP_CG_PRIVATE) continue;
      if (kind == SP_CG_ARRAY) sp_text_add(&t, "%s%s *sp_%s", np ? ", " : "", v->type, v->name);
      else if (kind == SP_CG_REDUCTION)
        sp_text_add(&t, "%s%s *sp_red_%s", np ? ", " : "", v->type, v->name);
      else sp_text_add(&t, "%s%s %s", np ? ", " : "", v->type, v->name);
      np++;
    }
  sp_text_add(&t, ")\n{\n");
  for (int i = 0; i < cg->nvars; i++) {
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind == SP_CG_ARRAY && v->shape && v->shape[0])
      sp_text_add(&t, "  %s (*%s)%s = (%s (*)%s)sp_%s;\n", v->type, v->name, v->shape, v->type,
                  v->shape, v->name);
    else if (v->kind == SP_CG_ARRAY)
      sp_text_add(&t, "  %s *%s = sp_%s;\n", v->type, v->name, v->name);
    else if (v->kind == SP_CG_REDUCTION)
      sp_text_add(&t, "  %s %s = (%s)(%s);\n", sp_red_accumulator_type(v), v->name,
                  sp_red_accumulator_type(v), sp_red_identity(v));
  }
  bool lane[SP_MAX_LOOPS];
  sp_plan_lane_loops(nest, s, lane);
  int depth = 1;
  for (int k = 0; k < nband; k++) {
    const sp_loop *L = &nest->loops[k];
    char p0[128], st[128];
    sp_map_exprs(&s->map[k], true, p0, st, sizeof p0);
    if (lane[k]) {
      sp_indent(&t, depth);
      sp_text_add(&t, "SP_LANE_LOOP\n");
    }
    sp_indent(&t, depth);
    if (s->collapse_count >= 2 && k == s->collapse_first) {
      int c0 = k, cn = s->collapse_count;
      int64_t total = 1, radix[SP_MAX_LOOPS];
      for (int j = cn - 1; j >= 0; j--) {
        radix[j] = total;
        total *= sp_const_trip(&nest->loops[c0 + j]);
      }
      /* the fused index is divided every iteration: 32-bit division where nothing overflows */
      bool narrow = total + 2 * sp_map_threads(&s->map[k], s) <= (int64_t)UINT32_MAX;
      if (narrow) sp_map_exprs(&s->map[k], false, p0, st, sizeof p0);
      const char *ft = narrow ? "unsigned int" : "long long", *lit = narrow ? "u" : "LL";
      sp_text_add(&t, "for (%s sp_f%d = %s; sp_f%d < %lld%s; sp_f%d += %s) {\n", ft, k, p0, k,
                  (long long)total, lit, k, st);
      for (int j = 0; j < cn; j++) {
        const sp_loop *G = &nest->loops[c0 + j];
        sp_indent(&t, depth + 1);
        char digit[128];
        if (j == 0) snprintf(digit, sizeof digit, "sp_f%d / %lld%s", k, (long long)radix[j], lit);
        else
          snprintf(digit, sizeof digit, "sp_f%d / %lld%s %% %lld%s", k, (long long)radix[j], lit,
                   (long long)sp_const_trip(G), lit);
        sp_text_add(&t, "const %s %s = (%s)(%lldLL + %lldLL * (long long)(%s));\n",
                    sp_index_type(cg, c0 + j), G->index, sp_index_type(cg, c0 + j),
                    (long long)G->lower.constant, (long long)G->step, digit);
      }
      k += cn - 1;
    } else if (s->map[k].thread_dim < 0 && s->map[k].block_dim < 0) {
      sp_text_add(&t, "for (%s %s = %s; %s %s (%s); %s += %lld) {\n", sp_index_type(cg, k), L->index,
                  L->lower_text ? L->lower_text : "0", L->index, cg->cmp[k],
                  L->upper_text ? L->upper_text : "0", L->index, (long long)L->step);
    } else {
      const char *T = sp_index_type(cg, k);
      sp_text_add(&t, "for (%s %s = (%s)((%s) + %lldLL * (%s)); %s %s (%s); %s += (%s)(%lldLL * (%s))) {\n",
                  T, L->index, T, L->lower_text ? L->lower_text : "0", (long long)L->step, p0,
                  L->index, cg->cmp[k], L->upper_text ? L->upper_text : "0", L->index, T,
                  (long long)L->step, st);
    }
    depth++;
  }
  sp_indent(&t, depth);
  sp_text_add(&t, "SP_ITERATION(");
  for (int k = 0; k < nband; k++) sp_text_add(&t, "%s%s", k ? ", " : "", nest->loops[k].index);
  sp_text_add(&t, ");\n");
  for (int i = 0; i < cg->nvars; i++) {
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind != SP_CG_PRIVATE) continue;
    sp_indent(&t, depth);
    if (v->shape) {
      sp_text_add(&t, "%s %s%s;\n", v->type, v->name, v->shape);
    } else if (v->read_first) {
      char lit[64];
      sp_scalar_literal(lit, sizeof lit, v);
      sp_text_add(&t, "%s %s = (%s)(%s);\n", v->type, v->name, v->type, lit);
    } else {
      sp_text_add(&t, "%s %s;\n", v->type, v->name);
    }
  }
  sp_indent(&t, depth);
  sp_text_add(&t, "%s\n", cg->body);
  while (--depth > 0) {
    sp_indent(&t, depth);
    sp_text_add(&t, "}\n");
  }
  /* Reductions are combined as an OpenACC compiler's tree reduction does: across each warp with
   * shuffles, then the warps' results across the block through shared memory, and one atomic per
   * block. One atomic per thread on one address serialized millions of them (himeno: 29 ms
   * instead of 0.2) and, for float sums, lost digits; one per warp still cost jacobi's max
   * reduction ~0.85 ns per warp on the H100 (524,288 warps: 570 us against 124 us for the same
   * traffic in 1,024 blocks). The shuffles need whole warps: blocks whose thread count is a
   * multiple of 32 (all but odd user-given shapes, which keep one atomic per thread). */
  bool whole_warps = (s->block[0] * s->block[1] * s->block[2]) % 32 == 0 && sp_has_reduction(cg);
  /* (the host-side emulation in the tests runs threads one after another: no shuffles there) */
  if (whole_warps)
    sp_text_add(&t, "#ifdef __CUDA_ARCH__\n"
                    "  const unsigned sp_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
                    "  const unsigned sp_nwarps = blockDim.x * blockDim.y * blockDim.z / 32;\n");
  for (int i = 0; whole_warps && i < cg->nvars; i++) { /* each warp's result to shared memory */
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind != SP_CG_REDUCTION) continue;
    sp_warp_combine(&t, v);
    sp_text_add(&t, "  __shared__ %s sp_w_%s[32];\n"
                    "  if (sp_tid %% 32 == 0) sp_w_%s[sp_tid / 32] = %s;\n",
                sp_red_accumulator_type(v), v->name, v->name, v->name);
  }
  if (whole_warps) sp_text_add(&t, "  __syncthreads();\n");
  for (int i = 0; whole_warps && i < cg->nvars; i++) { /* the first warp combines them */
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind != SP_CG_REDUCTION) continue;
    sp_text_add(&t, "  %s = sp_tid < sp_nwarps ? sp_w_%s[sp_tid] : (%s)(%s);\n", v->name,
                v->name, sp_red_accumulator_type(v), sp_red_identity(v));
    sp_warp_combine(&t, v);
  }
  if (whole_warps)
    sp_text_add(&t, "  if (sp_tid == 0)\n"
                    "#endif\n"
                    "  {\n");
  for (int i = 0; i < cg->nvars; i++) {
    const sp_cg_var *v = &cg->vars[i];
    if (v->kind != SP_CG_REDUCTION) continue;
    if (sp_cg_atomic_add_native(v)) {
      sp_text_add(&t, "  atomicAdd(sp_red_%s, (%s)%s);\n", v->name, v->type, v->name);
    } else {
      char helper[96];
      sp_red_helper_name(v, helper, sizeof helper);
      sp_text_add(&t, "  %s(sp_red_%s, (%s)%s);\n", helper, v->name, v->type, v->name);
    }
  }
  if (whole_warps) sp_text_add(&t, "  }\n");
  sp_text_add(&t, "}\n");
  return sp_text_take(&t);
}

/* ---- selection --------------------------------------------------------------------------------- */

int sp_plan_select(const sp_rank_result *r, int top, int sample, int *out, char *desc,
                   size_t desclen) {
  if (top < 0) top = SP_PLAN_DEFAULT_TOP;
  if (sample < 0) sample = SP_PLAN_DEFAULT_SAMPLE;
  int n = r->n, k = 0;
  if (n <= 0) {
    snprintf(desc, desclen, "none (empty space)");
    return 0;
  }
  if ((int64_t)top + sample >= n) {
    for (int i = 0; i < n; i++) out[k++] = r->order[i];
    snprintf(desc, desclen, "all %d", n);
    return k;
  }
  for (int i = 0; i < top; i++) out[k++] = r->order[i];
  int rest = n - top;
  int taken = 0;
  for (int j = 0; j < sample; j++) {
    /* evenly over ranks top+1 .. n, the first and the last of them included */
    int pos = top + (sample > 1 ? (int)((int64_t)j * (rest - 1) / (sample - 1)) : 0);
    bool dup = false;
    for (int i = 0; i < k; i++) dup |= out[i] == r->order[pos];
    if (!dup) {
      out[k++] = r->order[pos];
      taken++;
    }
  }
  int w = snprintf(desc, desclen, "top %d + %d evenly spaced of the remaining %d (by rank)", top,
                   taken, rest);
  /* both baselines (GCC's and nvc's compiler default): top + sample < n, so k <= n + 1 */
  int defs[2] = {r->default_gcc, r->default_nvc};
  for (int d = 0; d < 2; d++) {
    bool has_default = defs[d] < 0;
    for (int i = 0; i < k; i++) has_default |= out[i] == defs[d];
    if (has_default) continue;
    out[k++] = defs[d];
    if (w > 0 && (size_t)w < desclen)
      w += snprintf(desc + w, desclen - (size_t)w, " + the %s default", d ? "nvc" : "gcc");
  }
  return k;
}

/* ---- JSON -------------------------------------------------------------------------------------- */

static const char *sp_basename(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static const char *sp_init_kind(const sp_cg_var *v) {
  int64_t s = v->elem_size;
  if (v->floating && (s == 4 || s == 8)) return "float";
  if (v->is_integer && (s == 1 || s == 2 || s == 4 || s == 8)) return "int";
  return "bytes";
}

static json_t *sp_predicted_json(const sp_rank_candidate *c) {
  json_t *o = sp_report_counters_json(&c->total);
  json_object_set_new(o, "time_us", json_real(c->time.total_s * 1e6));
  json_object_set_new(o, "cost_xu", json_real(c->cost_xu));
  json_object_set_new(o, "sampled", json_boolean(c->sampled));
  return o;
}

static json_t *sp_candidate_json(const sp_nest *nest, const sp_rank_result *r, int idx, int rank) {
  const sp_rank_candidate *c = &r->candidates[idx];
  json_t *o = json_object();
  char kname[192], map[256];
  snprintf(kname, sizeof kname, "sp_%s_%u_c%d", nest->function, nest->loc.line, idx);
  sp_report_cuda_mapping(nest, &c->schedule, map, sizeof map);
  json_object_set_new(o, "id", json_integer(idx));
  json_object_set_new(o, "model_rank", json_integer(rank));
  json_object_set_new(o, "pattern", json_string(c->schedule.name));
  json_object_set_new(o, "cuda_mapping", json_string(map));
  json_object_set_new(o, "openacc", json_string(c->schedule.openacc));
  json_object_set_new(o, "compiler_default", json_boolean(idx == r->default_index));
  json_object_set_new(o, "kernel_name", json_string(kname));
  char *src = sp_plan_kernel_source(nest, &c->schedule, kname);
  json_object_set_new(o, "source", src ? json_string(src) : json_null());
  free(src);
  sp_report_launch_json(o, &c->schedule);
  json_object_set_new(o, "predicted", sp_predicted_json(c));
  return o;
}

/* {"id": "file.c:12", "file", "line"}: how the plan names a nest, kernel or skipped */
static json_t *sp_nest_id_json(const sp_nest *nest) {
  json_t *o = json_object();
  char id[256];
  snprintf(id, sizeof id, "%s:%u", sp_basename(nest->loc.file), nest->loc.line);
  json_object_set_new(o, "id", json_string(id));
  json_object_set_new(o, "file", json_string(nest->loc.file));
  json_object_set_new(o, "line", json_integer(nest->loc.line));
  return o;
}

static json_t *sp_kernel_json(const sp_nest *nest, const sp_rank_result *r,
                              const sp_plan_options *opt) {
  const sp_codegen *cg = nest->codegen;
  json_t *o = sp_nest_id_json(nest);
  json_object_set_new(o, "col", json_integer(nest->loc.col));
  json_object_set_new(o, "function", json_string(nest->function));
  json_t *loops = json_array();
  for (int k = 0; k < sp_plan_band(nest, nest->nloops) && nest->loops[k].band; k++) {
    json_t *l = json_object();
    json_object_set_new(l, "index", json_string(nest->loops[k].index));
    json_object_set_new(l, "trip", json_integer(nest->loops[k].trip_max));
    json_array_append_new(loops, l);
  }
  json_object_set_new(o, "loops", loops);
  json_t *arrays = json_array(), *scalars = json_array(), *reds = json_array(),
         *params = json_array();
  /* a write through a pointer the body derives may land in any array parameter */
  bool derived_writes = false;
  for (int ref = 0; ref < nest->nrefs; ref++) {
    bool param = false;
    for (int i = 0; i < cg->nvars; i++) param |= cg->vars[i].array == nest->refs[ref].array;
    derived_writes |= !param && nest->refs[ref].access == SP_WRITE;
  }
  for (int kind = SP_CG_ARRAY; kind >= SP_CG_SCALAR; kind--)
    for (int i = 0; i < cg->nvars; i++) {
      const sp_cg_var *v = &cg->vars[i];
      if ((int)v->kind != kind || kind == SP_CG_PRIVATE) continue;
      char p[160];
      json_t *e = json_object();
      json_object_set_new(e, "name", json_string(v->name));
      if (kind == SP_CG_ARRAY) {
        /* an array used only through derived pointers may be written through them */
        bool written = v->array < 0 || derived_writes;
        for (int ref = 0; ref < nest->nrefs; ref++)
          written |= nest->refs[ref].array == v->array && nest->refs[ref].access == SP_WRITE;
        json_object_set_new(e, "elem_type", json_string(v->type));
        json_object_set_new(e, "elem_size", json_integer(v->elem_size));
        json_object_set_new(e, "bytes", json_integer(v->bytes));
        json_object_set_new(e, "init", json_string(sp_init_kind(v)));
        json_object_set_new(e, "index_bound", json_integer(v->index_bound));
        json_object_set_new(e, "written", json_boolean(written));
        json_array_append_new(arrays, e);
        snprintf(p, sizeof p, "array:%s", v->name);
      } else if (kind == SP_CG_REDUCTION) {
        json_object_set_new(e, "type", json_string(v->type));
        json_object_set_new(e, "size", json_integer(v->elem_size));
        json_object_set_new(e, "op", json_string(v->op));
        json_array_append_new(reds, e);
        snprintf(p, sizeof p, "reduction:%s", v->name);
      } else {
        json_object_set_new(e, "type", json_string(v->type));
        json_object_set_new(e, "size", json_integer(v->elem_size));
        json_object_set_new(e, "value", v->floating ? json_real(v->value)
                                                    : json_integer((json_int_t)v->value));
        json_array_append_new(scalars, e);
        snprintf(p, sizeof p, "scalar:%s", v->name);
      }
      json_array_append_new(params, json_string(p));
    }
  json_object_set_new(o, "arrays", arrays);
  json_object_set_new(o, "scalars", scalars);
  json_object_set_new(o, "reductions", reds);
  json_object_set_new(o, "params", params);
  char *prelude = sp_plan_prelude(nest);
  json_object_set_new(o, "cuda_prelude", prelude ? json_string(prelude) : json_null());
  free(prelude);
  json_object_set_new(o, "reference", json_integer(r->default_index));
  json_object_set_new(o, "defaults", json_pack("{s:i, s:i}", "gcc", r->default_gcc, "nvc", r->default_nvc));
  json_object_set_new(o, "space_size", json_integer(r->n));
  int regs = sp_rank_registers(r);
  json_object_set_new(o, "registers_per_thread", regs > 0 ? json_integer(regs) : json_null());
  int *sel = malloc((size_t)(r->n + 1) * sizeof *sel);
  int *rank_of = malloc((size_t)(r->n + 1) * sizeof *rank_of);
  json_t *cands = json_array();
  if (sel && rank_of) {
    char desc[224];
    int ns = sp_plan_select(r, opt->top, opt->sample, sel, desc, sizeof desc), kept = 0;
    for (int i = 0; i < ns; i++)
      if (sp_plan_generates(nest, &r->candidates[sel[i]].schedule)) sel[kept++] = sel[i];
    if (kept < ns) {
      size_t dl = strlen(desc);
      snprintf(desc + dl, sizeof desc - dl, ", less %d that map a loop not perfectly nested",
               ns - kept);
    }
    ns = kept;
    json_object_set_new(o, "selection", json_string(desc));
    for (int i = 0; i < r->n; i++) rank_of[r->order[i]] = i + 1;
    /* in rank order */
    for (int i = 1; i < ns; i++)
      for (int j = i; j > 0 && rank_of[sel[j]] < rank_of[sel[j - 1]]; j--) {
        int tmp = sel[j];
        sel[j] = sel[j - 1];
        sel[j - 1] = tmp;
      }
    for (int i = 0; i < ns; i++)
      json_array_append_new(cands, sp_candidate_json(nest, r, sel[i], rank_of[sel[i]]));
  }
  json_object_set_new(o, "candidates", cands);
  free(sel);
  free(rank_of);
  return o;
}

/* Scalars the kernel takes whose value nobody gave: every candidate gets the same stand-in. */
static void sp_note_values(const sp_nest *nest, sp_diag *diag) {
  const sp_codegen *cg = nest->codegen;
  for (int i = 0; i < cg->nvars; i++) {
    const sp_cg_var *v = &cg->vars[i];
    if (v->value_known || !(v->kind == SP_CG_SCALAR || (v->kind == SP_CG_PRIVATE && v->read_first)))
      continue;
    char lit[64];
    sp_scalar_literal(lit, sizeof lit, v);
    sp_diag_report(diag, SP_NOTE, nest->loc.file, nest->loc.line, nest->loc.col,
                   "the plan passes %s for '%s', whose value the analyzer does not know%s", lit,
                   v->name, v->floating ? "" : " (give it with --param NAME=VALUE)");
  }
}

char *sp_plan_json(const sp_report_nest *nests, int n, const sp_arch *arch,
                   const sp_plan_options *opt, sp_diag *diag) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", json_string("schedpredict-plan"));
  json_object_set_new(root, "schema_version", json_integer(SP_PLAN_SCHEMA_VERSION));
  json_t *gen = json_object();
  json_object_set_new(gen, "tool", json_string("schedpredict"));
  json_object_set_new(gen, "version", json_string(SP_VERSION));
  json_object_set_new(gen, "command", json_string(opt->command ? opt->command : ""));
  char date[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_object_set_new(gen, "date", json_string(date));
  json_object_set_new(gen, "source_commit", json_null());
  json_object_set_new(root, "generator", gen);
  json_object_set_new(root, "model_arch", json_string(arch->name));
  json_t *kernels = json_array(), *skipped = json_array();
  for (int i = 0; i < n; i++) {
    const sp_nest *nest = nests[i].nest;
    sp_srcloc loc;
    const char *why = nests[i].rank ? sp_plan_not_generated(nest, &loc) : nests[i].error;
    if (!nests[i].rank) loc = nest->loc;
    char imperfect[256];
    const sp_rank_result *r = nests[i].rank;
    if (!why && r->default_index >= 0 &&
        !sp_plan_generates(nest, &r->candidates[r->default_index].schedule)) {
      int k = sp_plan_band(nest, nest->nloops);
      snprintf(imperfect, sizeof imperfect,
               "the compiler default maps loop %s, which is not the only statement in the body of "
               "loop %s: the harness generates perfectly nested loops only",
               nest->loops[k].index, nest->loops[k - 1].index);
      why = imperfect;
      loc = nest->loops[k].loc;
    }
    if (!why) {
      json_array_append_new(kernels, sp_kernel_json(nest, nests[i].rank, opt));
      sp_note_values(nest, diag);
      continue;
    }
    sp_diag_report(diag, SP_WARNING, loc.file, loc.line, loc.col,
                   "nest at line %u left out of the plan: %s", nest->loc.line, why ? why : "?");
    json_t *s = sp_nest_id_json(nest);
    json_object_set_new(s, "reason", json_string(why ? why : "?"));
    json_array_append_new(skipped, s);
  }
  json_object_set_new(root, "kernels", kernels);
  json_object_set_new(root, "skipped", skipped);
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return text;
}
