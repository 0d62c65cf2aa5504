/* The advice in the formats people and tools read: the report's "recommended" block and JSON
 * member, clang remarks, SARIF 2.1.0, LLVM optimization records (YAML) and clang-tidy's
 * export-fixes YAML. Every format carries the same findings (see sp_adv_findings). */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedpredict/advice.h"

#define SP_ADV_SARIF_SCHEMA \
  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

/* ---- a growable string ---- */

typedef struct sp_adv_buf {
  char *s;
  size_t len, cap;
  bool oom;
} sp_adv_buf;

static void sp_adv_put(sp_adv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sp_adv_put(sp_adv_buf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (b->len + (size_t)need + 1 > b->cap) {
    size_t nc = (b->cap ? b->cap * 2 : 1024) + (size_t)need;
    char *g = realloc(b->s, nc);
    if (!g) {
      b->oom = true;
      return;
    }
    b->s = g;
    b->cap = nc;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)need + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)need;
}

static char *sp_adv_done(sp_adv_buf *b) {
  if (b->oom) {
    free(b->s);
    return NULL;
  }
  if (!b->s) return strdup("");
  return b->s;
}

/* ---- findings ---- */

typedef enum sp_adv_rule {
  SP_RULE_BETTER,
  SP_RULE_UNCOALESCED,
  SP_RULE_IDLE_LANES,
  SP_RULE_FEW_GANGS,
  SP_RULE_DEPENDENCE,
  SP_RULE_PARTIAL_STORES,
  SP_RULE_GCC_KERNELS,
  SP_RULE_COUNT
} sp_adv_rule;

static const struct {
  const char *id, *opt_name, *summary;
} sp_adv_rules[SP_RULE_COUNT] = {
    {"better-schedule", "BetterSchedule",
     "A schedule the compiler can express is predicted faster than its default"},
    {"uncoalesced-access", "UncoalescedAccess",
     "A warp's accesses to an array touch many more sectors than a coalesced access would"},
    {"idle-vector-lanes", "IdleVectorLanes",
     "The loop on the vector lanes runs fewer iterations than the vector length"},
    {"too-few-gangs", "TooFewGangs", "The schedule launches fewer gangs than the GPU has SMs"},
    {"parallel-dependence", "ParallelDependence",
     "A loop marked parallel may carry a dependence"},
    {"partial-sector-stores", "PartialSectorStores",
     "A warp's stores leave sectors partly written, which the GPU merges more slowly than whole "
     "ones"},
    {"gcc-kernels-serial", "GccKernelsSerial",
     "GCC 12 runs an OpenACC kernels region's loops sequentially, or the outer one alone on "
     "gangs, unless built with --param=openacc-kernels=decompose and the loops say independent"},
};

typedef struct sp_adv_finding {
  sp_adv_rule rule;
  const char *level; /* SARIF level: note, warning */
  sp_srcloc loc;
  char message[1024];
} sp_adv_finding;

static const sp_rank_candidate *sp_adv_cand(const sp_adv_nest *a) {
  return a->candidate >= 0 ? &a->rank->candidates[a->candidate] : NULL;
}
static const sp_rank_candidate *sp_adv_default(const sp_adv_nest *a) {
  return a->rank && a->rank->default_index >= 0 ? &a->rank->candidates[a->rank->default_index]
                                                 : NULL;
}

static double sp_adv_speedup(const sp_adv_nest *a) {
  const sp_rank_candidate *c = sp_adv_cand(a), *d = sp_adv_default(a);
  return c && d && sp_adv_built_s(c) > 0 ? sp_adv_built_s(d) / sp_adv_built_s(c) : 1.0;
}

/* Where the nest's advice points: the directive of its outer loop, else the loop itself. */
static sp_srcloc sp_adv_nest_loc(const sp_nest *n) {
  if (n->nloops > 0 && n->loops[0].clauses.directive && n->loops[0].clauses.directive_loc.file)
    return n->loops[0].clauses.directive_loc;
  if (n->construct_clauses.directive && n->construct_clauses.directive_loc.file)
    return n->construct_clauses.directive_loc;
  return n->loc;
}

/* "i: gang worker; j: vector; num_gangs(512) num_workers(8) vector_length(32)" */
static void sp_adv_summary(const sp_adv_nest *a, char *buf, size_t n) {
  const sp_adv_plan *p = &a->plan;
  size_t u = 0;
  buf[0] = 0;
  for (int pos = 0; pos < p->nband && u < n; pos++) {
    const char *c = p->clauses[pos];
    if (!c[0] || strcmp(c, "-") == 0) continue;
    u += (size_t)snprintf(buf + u, n - u, "%s%s: %s", u ? "; " : "",
                          a->nest->loops[p->perm[pos]].index, c);
  }
  if (u < n)
    u += (size_t)snprintf(buf + u, n - u, "; num_gangs(%lld)", (long long)p->num_gangs);
  if (p->num_workers && u < n) u += (size_t)snprintf(buf + u, n - u, " num_workers(%d)", p->num_workers);
  if (u < n) snprintf(buf + u, n - u, " vector_length(%d)", p->vector_length);
}

/* The first reference to array k (the first store when stores_only), or NULL. */
static const sp_ref *sp_adv_first_ref(const sp_nest *nest, int k, bool stores_only) {
  for (int r = 0; r < nest->nrefs; r++)
    if (nest->refs[r].array == k && (!stores_only || nest->refs[r].access != SP_READ))
      return &nest->refs[r];
  return NULL;
}

/* The loop whose iterations a warp's lanes take (thread x; of a collapsed group, its innermost
 * loop), or NULL where no loop is on thread x. */
static const sp_loop *sp_adv_vector_loop(const sp_nest *nest, const sp_schedule *s) {
  for (int k = 0; k < s->nband && k < nest->nloops; k++) {
    if (s->map[k].thread_dim != 0) continue;
    if (s->collapse_count >= 2 && k == s->collapse_first) k += s->collapse_count - 1;
    return k < nest->nloops ? &nest->loops[k] : NULL;
  }
  return NULL;
}

/* What GCC 12 does with the nest's kernels region, checked with gcc 12.2 -fopt-info-omp and on
 * the H200 (validation/results/h200/gcc-openacc/2026-12-02-kernels-decompose/, kernel times in
 * 2026-12-02-kernels-baseline/): as written,
 * "assigned OpenACC seq loop parallelism" to the whole region, or "gang" to its outer loop
 * where the parloops pass proves that loop independent; loops with clauses but no
 * `independent` are `auto` there and run sequentially; with --param=openacc-kernels=decompose,
 * "parallelized loop nest" where the loops say independent, but "unparallelized loop nest ...:
 * it's executed conditionally" inside a sequential loop. */
static void sp_adv_gcc_kernels_message(const sp_adv_nest *a, char *buf, size_t n) {
  const sp_nest *nest = a->nest;
  const sp_adv_plan *p = &a->plan;
  bool added = false;
  const char *lacks = NULL, *outer_seq = NULL;
  int first = -1;
  for (int pos = 0; a->candidate >= 0 && pos < p->nband; pos++) {
    const char *c = p->clauses[pos];
    const sp_loop *L = &nest->loops[p->perm[pos]];
    if (!c[0] || !strcmp(c, "-") || !strcmp(c, "seq")) continue;
    if (first < 0) first = pos;
    if (strstr(c, "independent")) added = true;
    else if (!(L->clauses.flags & SP_CL_INDEPENDENT) && !lacks) lacks = L->index;
  }
  for (int pos = 0; pos < first; pos++)
    if (!nest->loops[p->perm[pos]].parallel) {
      outer_seq = nest->loops[p->perm[pos]].index;
      break;
    }
  /* the baseline: GCC's form as written where the space has it (traces/schedule.c) */
  char baseline[192];
  const sp_rank_candidate *d = sp_adv_default(a);
  const sp_schedule *ds = d ? &d->schedule : NULL;
  int gang_loop = -1, mapped = 0;
  for (int k = 0; ds && k < nest->nloops; k++) {
    mapped += ds->map[k].thread_dim >= 0 || ds->map[k].block_dim >= 0;
    if (ds->map[k].block_dim >= 0 && ds->map[k].thread_dim < 0 && gang_loop < 0) gang_loop = k;
  }
  if (!ds || strcmp(ds->name, "gcc-default") != 0)
    snprintf(baseline, sizeof baseline, "the speedups above are against nvc's default, not GCC's");
  else if (!mapped)
    snprintf(baseline, sizeof baseline,
             "the speedups above are against that one thread, as the model runs it");
  else if (mapped == 1 && gang_loop >= 0 && ds->block[0] * ds->block[1] * ds->block[2] == 1)
    snprintf(baseline, sizeof baseline,
             "the speedups above are against loop %s alone on gangs of one lane, as the model "
             "runs it", nest->loops[gang_loop].index);
  else
    snprintf(baseline, sizeof baseline,
             "the speedups above are against the loops' clauses as GCC partitions them with "
             "the flag");
  size_t u = (size_t)snprintf(
      buf, n,
      "GCC 12 does not partition a kernels region's loops as clauses say: they are 'auto' "
      "there, and as written it runs the region on one GPU thread or, where its parloops pass "
      "proves the outer loop independent, that loop alone on gangs (on the H200, 2026-12-02: "
      "kernels_region.c's kernel 4.02 s on one thread, a kernels transpose 396 us); build with "
      "--param=openacc-kernels=decompose, which partitions the loops that say 'independent' "
      "(fixed so: 148 us and 121 us)%s; %s",
      added ? "; the recommendation adds it where the dependence test proved the loop "
              "independent"
            : "",
      baseline);
  if (lacks && u < n)
    u += (size_t)snprintf(buf + u, n - u,
                          "; loop %s does not say it, so GCC keeps it sequential (add it if "
                          "its iterations are independent)", lacks);
  if (outer_seq && u < n)
    snprintf(buf + u, n - u,
             "; inside sequential loop %s GCC partitions nothing even so (\"executed "
             "conditionally\"): put the compute construct inside loop %s",
             outer_seq, outer_seq);
}

static int sp_adv_findings(const sp_adv_nest *a, const sp_arch *arch, sp_adv_compiler cc,
                           sp_adv_finding *f, int max) {
  int n = 0;
  const sp_nest *nest = a->nest;
  const sp_rank_candidate *c = sp_adv_cand(a), *d = sp_adv_default(a);
  if (c && d && a->candidate != a->rank->default_index && !a->no_gain && n < max) {
    char sum[512];
    sp_adv_summary(a, sum, sizeof sum);
    f[n] = (sp_adv_finding){SP_RULE_BETTER, "warning", sp_adv_nest_loc(nest), ""};
    snprintf(f[n].message, sizeof f[n].message,
             "schedule predicted %.2fx faster than the compiler default for %s: %s%s",
             sp_adv_speedup(a), sp_adv_compiler_name(cc), sum,
             a->plan.interchange ? " (after interchanging the loops)" : "");
    n++;
  }
  if (d) {
    /* per array, under the default schedule: sectors per request against the ideal */
    for (int k = 0; k < nest->narrays && n < max; k++) {
      const sp_cm_counters *x = &d->per_array[k];
      int64_t req = x->ld_requests + x->st_requests, sec = x->ld_sectors + x->st_sectors;
      const sp_ref *first = sp_adv_first_ref(nest, k, false);
      int64_t size = first ? first->size : 0;
      sp_srcloc loc = first ? first->loc : nest->loc;
      double ideal = (double)(size * SP_WARP) / 32.0;
      if (ideal < 1) ideal = 1;
      if (req == 0 || (double)sec / (double)req <= 2 * ideal) continue;
      bool indirect = true; /* every reference to it irregular: no layout makes it 8 */
      for (int r = 0; r < nest->nrefs; r++)
        if (nest->refs[r].array == k && !nest->refs[r].irregular) indirect = false;
      f[n] = (sp_adv_finding){SP_RULE_UNCOALESCED, "warning", loc, ""};
      int w = indirect
                  ? snprintf(f[n].message, sizeof f[n].message,
                             "accesses to %s are uncoalesced under the compiler default: %.1f "
                             "sectors per warp request, through an indirect subscript (%s): the "
                             "model takes the values it loads as spread over %s, a sector a lane "
                             "unless lanes load the same value",
                             nest->arrays[k].name, (double)sec / (double)req,
                             first && first->text ? first->text : "?", nest->arrays[k].name)
                  : snprintf(f[n].message, sizeof f[n].message,
                             "accesses to %s are uncoalesced under the compiler default: %.1f "
                             "sectors per warp request where %.0f would do",
                             nest->arrays[k].name, (double)sec / (double)req, ideal);
      if (c && w > 0) {
        const sp_cm_counters *y = &c->per_array[k];
        int64_t r2 = y->ld_requests + y->st_requests;
        if (r2)
          snprintf(f[n].message + w, sizeof f[n].message - (size_t)w,
                   " (%.1f with the recommended schedule)",
                   (double)(y->ld_sectors + y->st_sectors) / (double)r2);
      }
      n++;
    }
    /* the vector loop of the default schedule */
    for (int k = 0; k < d->schedule.nband && n < max; k++) {
      if (d->schedule.map[k].thread_dim != 0) continue;
      const sp_loop *L = &nest->loops[k];
      int V = d->schedule.block[0];
      bool grouped = d->schedule.collapse_count >= 2 && k == d->schedule.collapse_first;
      if (grouped || L->trip_max <= 0 || L->trip_max >= V) continue;
      f[n] = (sp_adv_finding){SP_RULE_IDLE_LANES, "warning", L->loc, ""};
      snprintf(f[n].message, sizeof f[n].message,
               "loop %s runs %lld iterations on vector_length(%d) lanes under the compiler "
               "default: %.0f%% of the lanes idle",
               L->index, (long long)L->trip_max, V, 100.0 * (double)(V - L->trip_max) / V);
      n++;
    }
    int64_t gangs = d->schedule.grid[0] * d->schedule.grid[1] * d->schedule.grid[2];
    if (gangs < arch->sm_count && n < max) {
      f[n] = (sp_adv_finding){SP_RULE_FEW_GANGS, "warning", sp_adv_nest_loc(nest), ""};
      snprintf(f[n].message, sizeof f[n].message,
               "the compiler default launches %lld gang%s for the %d SMs of the %s: %d SMs idle",
               (long long)gangs, gangs == 1 ? "" : "s", arch->sm_count, arch->name,
               arch->sm_count - (int)gangs);
      n++;
    }
  }
  /* per array, under the recommended schedule, where the arch has the cost measured: a tenth
   * or more of the store sectors partly written, costing at least 5 % of the predicted time
   * (validation/results/h100/2026-11-23-partial-probe; the gain of an aligned start from
   * 2026-11-23-partial-gap-probe, the same guarded kernel both ways) */
  for (int k = 0; c && arch->l2_partial_write_ns > 0 && k < nest->narrays && n < max; k++) {
    const sp_cm_counters *x = &c->per_array[k];
    double charged = sp_rank_partial_charged_sectors(x);
    double cost_s = sp_rank_partial_write_seconds(charged, arch);
    if (charged <= 0 || 10 * charged < (double)x->st_sectors || cost_s < 0.05 * c->time.total_s)
      continue;
    const sp_ref *store = sp_adv_first_ref(nest, k, true);
    sp_srcloc loc = store ? store->loc : nest->loc;
    bool most = 2 * x->st_partial_sectors >= x->st_sectors;
    char start[160] = "";
    const sp_loop *vec = sp_adv_vector_loop(nest, &c->schedule);
    if (most || !vec || (sp_affine_is_const(&vec->lower) && vec->lower.constant == 0))
      ; /* (the start is not what splits the sectors) */
    else if (sp_affine_is_const(&vec->lower))
      snprintf(start, sizeof start, " (the vector loop %s starts at %lld)", vec->index,
               (long long)vec->lower.constant);
    else
      snprintf(start, sizeof start, " (the vector loop %s starts at %s, which moves with the loops "
               "around it)", vec->index, vec->lower_text ? vec->lower_text : "?");
    f[n] = (sp_adv_finding){SP_RULE_PARTIAL_STORES, "note", loc, ""};
    snprintf(f[n].message, sizeof f[n].message,
             "under the recommended schedule, %.0f%% of the sectors stored to %s are written "
             "only in part (%.1f us of its predicted time on the %s; more where the rest of a "
             "sector comes from far away on the GPU): %s%s%s",
             100.0 * (double)x->st_partial_sectors / (double)x->st_sectors, nest->arrays[k].name,
             cost_s * 1e6, arch->name,
             most ? "each warp writes only part of most sectors it touches (a strided or "
                    "scattered store)"
                  : "a warp's elements start off a 32-byte sector boundary", start,
             most ? ""
                  : "; running the vector loop from an aligned index under a guard avoids it "
                    "(jacobi2d's stencil: 2-14% faster on the H100, the most where blocks "
                    "walk rows)");
    n++;
  }
  if (a->rank && sp_adv_gcc_kernels(nest, cc) && n < max) {
    f[n] = (sp_adv_finding){SP_RULE_GCC_KERNELS, "warning", sp_adv_nest_loc(nest), ""};
    sp_adv_gcc_kernels_message(a, f[n].message, sizeof f[n].message);
    n++;
  }
  for (int k = 0; k < nest->nloops && n < max; k++) {
    const sp_loop *L = &nest->loops[k];
    if (L->parallel_reason != SP_PAR_DECLARED || !L->dependence) continue;
    f[n] = (sp_adv_finding){SP_RULE_DEPENDENCE, "warning", L->loc, ""};
    snprintf(f[n].message, sizeof f[n].message, "loop %s is marked parallel but %s", L->index,
             L->dependence);
    n++;
  }
  return n;
}

#define SP_ADV_MAX_FINDINGS 32

/* ---- text and JSON members of the report ---- */

/* appends and frees lines from sp_report_prose: the advice block's notes wrap as the report's
 * prose (the findings stay one line each: editors read them as diagnostics) */
static void sp_adv_put_lines(sp_adv_buf *b, char *lines) {
  if (lines) sp_adv_put(b, "%s", lines);
  else b->oom = true;
  free(lines);
}

static void sp_adv_put_directive(sp_adv_buf *b, const char *d) {
  for (const char *p = d; *p; p++) {
    if (*p == '\n') sp_adv_put(b, "\n        ");
    else if (*p != '\r') sp_adv_put(b, "%c", *p);
  }
}

/* Whether OpenMP offload has a form for the plan: no worker level (a second thread dimension),
 * and gang on the outermost loop, which the combined `target teams distribute` must take. */
static bool sp_adv_omp_form(const sp_adv_plan *p) {
  return !p->num_workers && strstr(p->clauses[0], "gang") != NULL;
}

/* The plan as OpenMP offload directives (sp_adv_omp_form), for an omp target nest: gang is
 * `teams distribute`, vector `parallel for`, num_gangs num_teams and vector_length
 * thread_limit. */
static void sp_adv_put_omp(sp_adv_buf *b, const sp_adv_nest *a) {
  const sp_adv_plan *p = &a->plan;
  for (int pos = 0; pos < p->nband; pos++) {
    const sp_loop *L = &a->nest->loops[p->perm[pos]];
    const char *c = p->clauses[pos];
    if (strcmp(c, "-") && c[0]) {
      int collapse = 0;
      if (sscanf(c, "collapse(%d)", &collapse) != 1) collapse = 0;
      char red[3 * sizeof p->reduction[0]] = "";
      sp_adv_reduction_clauses(p, pos, NULL, red, sizeof red);
      char coll[24] = "";
      if (collapse) snprintf(coll, sizeof coll, " collapse(%d)", collapse);
      bool gang = strstr(c, "gang") != NULL, vector = strstr(c, "vector") != NULL;
      if (pos == 0)
        sp_adv_put(b, "    #pragma omp target teams distribute%s%s num_teams(%" PRId64
                      ") thread_limit(%d)%s\n",
                   vector ? " parallel for" : "", coll, p->num_gangs, p->vector_length, red);
      else if (gang || vector)
        sp_adv_put(b, "    %*s#pragma omp %s%s%s%s%s\n", 2 * pos, "",
                   gang ? "distribute" : "", gang && vector ? " " : "", vector ? "parallel for" : "",
                   coll, red);
    }
    sp_adv_put(b, "    %*sfor (%s ...)%s\n", 2 * pos, "", L->index,
               p->perm[pos] != pos ? "   // interchanged" : "");
  }
}

char *sp_adv_text(const sp_adv_nest *a, const sp_arch *arch, sp_adv_compiler cc) {
  sp_adv_buf b = {0};
  const char *cn = sp_adv_compiler_name(cc);
  const sp_rank_candidate *c = sp_adv_cand(a);
  if (!a->rank) return strdup("");
  if (!c) {
    sp_adv_put_lines(&b, sp_report_prose("recommended for %s: none of the ranked schedules can be "
                                         "written for %s",
                                         cn, cn));
  } else if (a->no_gain) {
    sp_adv_put_lines(&b, sp_report_prose("recommended for %s: keep the schedule as written; the "
                                         "best %s can express (rank %d, %s) is predicted %.2fx "
                                         "the compiler default's speed",
                                         cn, cn, a->rank_pos + 1, c->schedule.name,
                                         sp_adv_speedup(a)));
  } else if (a->nest->construct == SP_CONSTRUCT_OMP_TARGET) {
    char map[256];
    sp_report_cuda_mapping(a->nest, &c->schedule, map, sizeof map);
    sp_adv_put_lines(&b, sp_report_prose("recommended as OpenMP (rank %d, predicted %.2fx the "
                                         "compiler default's speed; as CUDA: %s, block %dx%dx%d, "
                                         "grid %" PRId64 ")%s",
                                         a->rank_pos + 1, sp_adv_speedup(a), map,
                                         c->schedule.block[0], c->schedule.block[1],
                                         c->schedule.block[2], c->schedule.grid[0],
                                         !sp_adv_omp_form(&a->plan)
                                             ? ": OpenMP has no form for it"
                                         : a->plan.interchange
                                             ? ", with the loops interchanged (the other clauses, "
                                               "such as map, as written):"
                                             : " (the other clauses, such as map, as written):"));
    if (sp_adv_omp_form(&a->plan)) sp_adv_put_omp(&b, a);
  } else {
    sp_adv_put_lines(&b, sp_report_prose("recommended for %s (rank %d, predicted %.2fx the "
                                         "compiler default's speed)%s:",
                                         cn, a->rank_pos + 1, sp_adv_speedup(a),
                                         a->plan.interchange ? ", with the loops interchanged"
                                                             : ""));
    for (int pos = 0; pos < a->plan.nband; pos++) {
      const sp_loop *L = &a->nest->loops[a->plan.perm[pos]];
      if (pos == 0 && a->construct_directive) {
        sp_adv_put(&b, "    ");
        sp_adv_put_directive(&b, a->construct_directive);
        sp_adv_put(&b, "\n");
      }
      if (a->directive[pos]) {
        sp_adv_put(&b, "    %*s", 2 * pos, "");
        sp_adv_put_directive(&b, a->directive[pos]);
        sp_adv_put(&b, "\n");
      } else if (strcmp(a->plan.clauses[pos], "-") && a->plan.clauses[pos][0]) {
        char red[3 * sizeof a->plan.reduction[0]] = "";
        sp_adv_reduction_clauses(&a->plan, pos, NULL, red, sizeof red);
        sp_adv_put(&b, "    %*s#pragma acc loop %s%s\n", 2 * pos, "", a->plan.clauses[pos], red);
      }
      sp_adv_put(&b, "    %*sfor (%s ...)%s\n", 2 * pos, "", L->index,
                 a->plan.perm[pos] != pos ? "   // interchanged" : "");
    }
    /* no rewritten directive carries the sizes (a compute construct shared with other nests):
     * name them, the gain may be all theirs */
    if (!a->construct_directive && !a->directive[0]) {
      char sizes[128];
      sp_adv_construct_clauses(&a->plan, sizes, sizeof sizes);
      sp_adv_put(&b, "    with %s on the compute construct\n", sizes);
    }
  }
  const sp_rank_candidate *dflt = sp_adv_default(a);
  /* where it weighs: 5 % of either time */
  if (c && dflt && (c->time.lowering_s > 0.05 * sp_adv_built_s(c) ||
                    dflt->time.lowering_s > 0.05 * sp_adv_built_s(dflt)))
    sp_adv_put_lines(&b, sp_report_prose(
        "%s's reduction code (compare-and-swap folds, advice/lowering.c) is counted in the "
        "speedup above, not in the table or the summary below: %.0f us of the compiler "
        "default's predicted %.0f, %.0f us of the recommendation's %.0f",
        cn, dflt->time.lowering_s * 1e6, sp_adv_built_s(dflt) * 1e6, c->time.lowering_s * 1e6,
        sp_adv_built_s(c) * 1e6));
  if (a->best_why_not[0] && a->rank) {
    const sp_rank_candidate *best = &a->rank->candidates[a->rank->order[0]];
    char map[160];
    sp_report_cuda_mapping(a->nest, &best->schedule, map, sizeof map);
    sp_adv_put_lines(&b, sp_report_prose("the model's best (rank 1) cannot be written for %s: %s; "
                                         "as CUDA: %s, block %dx%dx%d, grid %lldx%lldx%lld",
                                         cn, a->best_why_not, map, best->schedule.block[0],
                                         best->schedule.block[1], best->schedule.block[2],
                                         (long long)best->schedule.grid[0],
                                         (long long)best->schedule.grid[1],
                                         (long long)best->schedule.grid[2]));
  }
  if (a->fix_error[0] && !a->no_gain)
    sp_adv_put_lines(&b, sp_report_prose("--fix leaves this nest alone: %s", a->fix_error));
  sp_adv_finding f[SP_ADV_MAX_FINDINGS];
  int nf = sp_adv_findings(a, arch, cc, f, SP_ADV_MAX_FINDINGS);
  for (int i = 0; i < nf; i++)
    if (f[i].rule != SP_RULE_BETTER)
      sp_adv_put(&b, "  %s:%u:%u: %s [%s]\n", f[i].loc.file, f[i].loc.line, f[i].loc.col,
                 f[i].message, sp_adv_rules[f[i].rule].id);
  return sp_adv_done(&b);
}

static json_t *sp_adv_loc_json(const sp_srcloc *l) {
  json_t *o = json_object();
  json_object_set_new(o, "file", json_string(l->file ? l->file : ""));
  json_object_set_new(o, "line", json_integer(l->line));
  json_object_set_new(o, "column", json_integer(l->col));
  return o;
}

char *sp_adv_json(const sp_adv_nest *a, const sp_arch *arch, sp_adv_compiler cc) {
  json_t *o = json_object();
  json_object_set_new(o, "compiler", json_string(sp_adv_compiler_name(cc)));
  const sp_rank_candidate *c = sp_adv_cand(a);
  if (c) {
    json_t *r = json_object();
    char map[160];
    sp_report_cuda_mapping(a->nest, &c->schedule, map, sizeof map);
    json_object_set_new(r, "rank", json_integer(a->rank_pos + 1));
    json_object_set_new(r, "pattern", json_string(c->schedule.name));
    json_object_set_new(r, "cuda_mapping", json_string(map));
    json_object_set_new(r, "speedup_over_default", json_real(sp_adv_speedup(a)));
    json_object_set_new(r, "time_us", json_real(sp_adv_built_s(c) * 1e6));
    json_object_set_new(r, "reduction_code_us", json_real(c->time.lowering_s * 1e6));
    json_object_set_new(r, "interchange", json_boolean(a->plan.interchange));
    json_object_set_new(r, "num_gangs", json_integer(a->plan.num_gangs));
    json_object_set_new(r, "num_workers", json_integer(a->plan.num_workers));
    json_object_set_new(r, "vector_length", json_integer(a->plan.vector_length));
    json_t *loops = json_array();
    for (int pos = 0; pos < a->plan.nband; pos++) {
      json_t *l = json_object();
      const sp_loop *L = &a->nest->loops[a->plan.perm[pos]];
      json_object_set_new(l, "loop", json_string(L->index));
      json_object_set_new(l, "line", json_integer(a->nest->loops[pos].loc.line));
      const char *cl = a->plan.clauses[pos];
      json_object_set_new(l, "clauses", json_string(strcmp(cl, "-") ? cl : ""));
      json_object_set_new(l, "collapsed", json_boolean(strcmp(cl, "-") == 0));
      json_object_set_new(l, "directive",
                          a->directive[pos] ? json_string(a->directive[pos]) : json_null());
      json_array_append_new(loops, l);
    }
    json_object_set_new(r, "loops", loops);
    json_object_set_new(r, "construct_directive", a->construct_directive
                                                      ? json_string(a->construct_directive)
                                                      : json_null());
    json_object_set_new(o, "recommended", r);
  } else {
    json_object_set_new(o, "recommended", json_null());
  }
  json_object_set_new(o, "model_best_expressible", json_boolean(a->best_why_not[0] == 0));
  if (a->best_why_not[0])
    json_object_set_new(o, "model_best_not_expressible_because", json_string(a->best_why_not));
  json_t *fix = json_object();
  json_object_set_new(fix, "applicable", json_boolean(!a->fix_error[0] && c));
  if (a->fix_error[0]) json_object_set_new(fix, "reason", json_string(a->fix_error));
  json_t *reps = json_array();
  for (int k = 0; k < a->nedits; k++) {
    json_t *e = json_object();
    json_object_set_new(e, "offset", json_integer((json_int_t)a->edits[k].offset));
    json_object_set_new(e, "length", json_integer((json_int_t)a->edits[k].length));
    json_object_set_new(e, "text", json_string(a->edits[k].text));
    json_array_append_new(reps, e);
  }
  json_object_set_new(fix, "replacements", reps);
  json_object_set_new(o, "fix", fix);
  json_t *fs = json_array();
  sp_adv_finding f[SP_ADV_MAX_FINDINGS];
  int nf = sp_adv_findings(a, arch, cc, f, SP_ADV_MAX_FINDINGS);
  for (int i = 0; i < nf; i++) {
    json_t *e = json_object();
    json_object_set_new(e, "rule", json_string(sp_adv_rules[f[i].rule].id));
    json_object_set_new(e, "location", sp_adv_loc_json(&f[i].loc));
    json_object_set_new(e, "message", json_string(f[i].message));
    json_array_append_new(fs, e);
  }
  json_object_set_new(o, "findings", fs);
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  json_decref(o);
  return s;
}

/* ---- clang remarks ---- */

/* The one-line verdict on a nest (the remark's text). */
static void sp_adv_verdict(const sp_adv_nest *a, sp_adv_compiler cc, char *buf, size_t n) {
  const char *cn = sp_adv_compiler_name(cc);
  size_t u;
  if (!a->rank) {
    u = (size_t)snprintf(buf, n, "nest not ranked");
  } else if (a->candidate < 0) {
    u = (size_t)snprintf(buf, n, "no ranked schedule can be written for %s", cn);
  } else if (a->no_gain) {
    u = (size_t)snprintf(buf, n, "keep the schedule: nothing %s can express is predicted %.0f%% "
                                 "faster than the compiler default", cn, (SP_ADV_MIN_GAIN - 1) * 100);
  } else {
    char sum[512];
    sp_adv_summary(a, sum, sizeof sum);
    u = (size_t)snprintf(buf, n, "predicted %.2fx faster with %s%s", sp_adv_speedup(a), sum,
                         a->plan.interchange ? " after interchanging the loops" : "");
  }
  if (a->best_why_not[0] && u < n)
    snprintf(buf + u, n - u, "; the model's best needs CUDA (%s)", a->best_why_not);
}

char *sp_adv_remarks(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc) {
  sp_adv_buf b = {0};
  for (int i = 0; i < n; i++) {
    sp_srcloc loc = sp_adv_nest_loc(a[i].nest);
    char msg[1024];
    sp_adv_verdict(&a[i], cc, msg, sizeof msg);
    sp_adv_put(&b, "%s:%u:%u: remark: %s [-Rschedpredict]\n", loc.file, loc.line, loc.col, msg);
  }
  (void)arch;
  return sp_adv_done(&b);
}

/* ---- SARIF 2.1.0 ---- */

/* 1-based line and column of a byte offset. */
static void sp_adv_linecol(const char *t, size_t off, unsigned *line, unsigned *col) {
  unsigned l = 1, c = 1;
  for (size_t i = 0; i < off && t[i]; i++) {
    if (t[i] == '\n') l++, c = 1;
    else c++;
  }
  *line = l;
  *col = c;
}

static json_t *sp_adv_region(const sp_srcloc *l) {
  json_t *r = json_object();
  json_object_set_new(r, "startLine", json_integer(l->line ? l->line : 1));
  if (l->col) json_object_set_new(r, "startColumn", json_integer(l->col));
  return r;
}

static json_t *sp_adv_artifact(const char *file) {
  json_t *o = json_object();
  json_object_set_new(o, "uri", json_string(file));
  return o;
}

static json_t *sp_adv_sarif_fix(const sp_adv_nest *a, const char *msg) {
  size_t len;
  char *t = sp_adv_read_file(a->nest->loc.file, &len);
  if (!t) return NULL;
  json_t *reps = json_array();
  for (int k = 0; k < a->nedits; k++) {
    const sp_adv_edit *e = &a->edits[k];
    unsigned l0, c0, l1, c1;
    sp_adv_linecol(t, e->offset, &l0, &c0);
    sp_adv_linecol(t, e->offset + e->length, &l1, &c1);
    json_t *reg = json_object();
    json_object_set_new(reg, "startLine", json_integer(l0));
    json_object_set_new(reg, "startColumn", json_integer(c0));
    json_object_set_new(reg, "endLine", json_integer(l1));
    json_object_set_new(reg, "endColumn", json_integer(c1));
    json_object_set_new(reg, "charOffset", json_integer((json_int_t)e->offset));
    json_object_set_new(reg, "charLength", json_integer((json_int_t)e->length));
    json_t *rep = json_object();
    json_object_set_new(rep, "deletedRegion", reg);
    json_t *ins = json_object();
    json_object_set_new(ins, "text", json_string(e->text));
    json_object_set_new(rep, "insertedContent", ins);
    json_array_append_new(reps, rep);
  }
  free(t);
  json_t *change = json_object();
  json_object_set_new(change, "artifactLocation", sp_adv_artifact(a->nest->loc.file));
  json_object_set_new(change, "replacements", reps);
  json_t *changes = json_array();
  json_array_append_new(changes, change);
  json_t *fix = json_object();
  json_t *desc = json_object();
  json_object_set_new(desc, "text", json_string(msg));
  json_object_set_new(fix, "description", desc);
  json_object_set_new(fix, "artifactChanges", changes);
  json_t *fixes = json_array();
  json_array_append_new(fixes, fix);
  return fixes;
}

char *sp_adv_sarif(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc) {
  json_t *root = json_object();
  json_object_set_new(root, "$schema", json_string(SP_ADV_SARIF_SCHEMA));
  json_object_set_new(root, "version", json_string("2.1.0"));
  json_t *driver = json_object();
  json_object_set_new(driver, "name", json_string("schedpredict"));
  json_object_set_new(driver, "version", json_string(SP_VERSION));
  json_t *rules = json_array();
  for (int r = 0; r < SP_RULE_COUNT; r++) {
    json_t *o = json_object(), *sd = json_object();
    json_object_set_new(o, "id", json_string(sp_adv_rules[r].id));
    json_object_set_new(o, "name", json_string(sp_adv_rules[r].opt_name));
    json_object_set_new(sd, "text", json_string(sp_adv_rules[r].summary));
    json_object_set_new(o, "shortDescription", sd);
    json_array_append_new(rules, o);
  }
  json_object_set_new(driver, "rules", rules);
  json_t *tool = json_object();
  json_object_set_new(tool, "driver", driver);
  json_t *results = json_array();
  for (int i = 0; i < n; i++) {
    sp_adv_finding f[SP_ADV_MAX_FINDINGS];
    int nf = a[i].rank ? sp_adv_findings(&a[i], arch, cc, f, SP_ADV_MAX_FINDINGS) : 0;
    for (int k = 0; k < nf; k++) {
      json_t *res = json_object(), *msg = json_object();
      json_object_set_new(res, "ruleId", json_string(sp_adv_rules[f[k].rule].id));
      json_object_set_new(res, "ruleIndex", json_integer(f[k].rule));
      json_object_set_new(res, "level", json_string(f[k].level));
      json_object_set_new(msg, "text", json_string(f[k].message));
      json_object_set_new(res, "message", msg);
      json_t *phys = json_object(), *loc = json_object(), *locs = json_array();
      json_object_set_new(phys, "artifactLocation", sp_adv_artifact(f[k].loc.file));
      json_object_set_new(phys, "region", sp_adv_region(&f[k].loc));
      json_object_set_new(loc, "physicalLocation", phys);
      json_array_append_new(locs, loc);
      json_object_set_new(res, "locations", locs);
      if (f[k].rule == SP_RULE_BETTER && a[i].nedits > 0) {
        json_t *fx = sp_adv_sarif_fix(&a[i], "rewrite the pragmas to the recommended schedule");
        if (fx) json_object_set_new(res, "fixes", fx);
      }
      json_array_append_new(results, res);
    }
  }
  json_t *run = json_object();
  json_object_set_new(run, "tool", tool);
  json_object_set_new(run, "results", results);
  json_t *runs = json_array();
  json_array_append_new(runs, run);
  json_object_set_new(root, "runs", runs);
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return s;
}

/* ---- LLVM optimization records ---- */

/* YAML single-quoted scalar (one line: newlines of continued directives become spaces). */
static void sp_adv_put_squoted(sp_adv_buf *b, const char *s) {
  sp_adv_put(b, "'");
  for (const char *p = s; *p; p++) {
    if (*p == '\'') sp_adv_put(b, "''");
    else if (*p == '\\' && (p[1] == '\n' || p[1] == '\r')) continue;
    else if (*p == '\n' || *p == '\r' || *p == '\t') sp_adv_put(b, " ");
    else sp_adv_put(b, "%c", *p);
  }
  sp_adv_put(b, "'");
}

/* "--- !Analysis" up to the Function line (opt-viewer drops records without a DebugLoc). */
static void sp_adv_record_head(sp_adv_buf *b, const char *name, sp_srcloc loc, const char *fn) {
  sp_adv_put(b, "--- !Analysis\nPass:            schedpredict\nName:            %s\n"
                "DebugLoc:        { File: ", name);
  sp_adv_put_squoted(b, loc.file ? loc.file : "?");
  sp_adv_put(b, ", Line: %u, Column: %u }\nFunction:        ", loc.line, loc.col ? loc.col : 1);
  sp_adv_put_squoted(b, fn ? fn : "?");
  sp_adv_put(b, "\n");
}

char *sp_adv_opt_record(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc) {
  sp_adv_buf b = {0};
  for (int i = 0; i < n; i++) {
    sp_adv_finding f[SP_ADV_MAX_FINDINGS];
    int nf = a[i].rank ? sp_adv_findings(&a[i], arch, cc, f, SP_ADV_MAX_FINDINGS) : 0;
    if (nf == 0 || f[0].rule != SP_RULE_BETTER) {
      /* every nest gets a record, as every nest gets a remark */
      sp_adv_record_head(&b, "Schedule", sp_adv_nest_loc(a[i].nest), a[i].nest->function);
      char msg[1024];
      sp_adv_verdict(&a[i], cc, msg, sizeof msg);
      sp_adv_put(&b, "Args:\n  - String:          ");
      sp_adv_put_squoted(&b, msg);
      sp_adv_put(&b, "\n...\n");
    }
    for (int k = 0; k < nf; k++) {
      sp_adv_record_head(&b, sp_adv_rules[f[k].rule].opt_name, f[k].loc, a[i].nest->function);
      sp_adv_put(&b, "Args:\n  - String:          ");
      sp_adv_put_squoted(&b, f[k].message);
      sp_adv_put(&b, "\n");
      if (f[k].rule == SP_RULE_BETTER) {
        sp_adv_put(&b, "  - String:          '. Write: '\n");
        for (int pos = 0; pos < a[i].plan.nband; pos++) {
          if (!a[i].directive[pos]) continue;
          sp_adv_put(&b, "  - Pragma:          ");
          sp_adv_put_squoted(&b, a[i].directive[pos]);
          sp_adv_put(&b, "\n  - String:          '; '\n");
        }
      }
      sp_adv_put(&b, "...\n");
    }
  }
  return sp_adv_done(&b);
}

/* ---- clang-tidy export-fixes ---- */

static void sp_adv_put_dquoted(sp_adv_buf *b, const char *s) {
  sp_adv_put(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') sp_adv_put(b, "\\%c", *p);
    else if (*p == '\n') sp_adv_put(b, "\\n");
    else if (*p == '\r') sp_adv_put(b, "\\r");
    else if (*p == '\t') sp_adv_put(b, "\\t");
    else if (*p < 0x20) sp_adv_put(b, "\\x%02x", *p);
    else sp_adv_put(b, "%c", *p);
  }
  sp_adv_put(b, "\"");
}

char *sp_adv_export_fixes(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc) {
  sp_adv_buf b = {0};
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
  sp_adv_put(&b, "---\nMainSourceFile:  ");
  char first[PATH_MAX] = "";
  if (n > 0 && !realpath(a[0].nest->loc.file, first)) snprintf(first, sizeof first, "%s", a[0].nest->loc.file);
  sp_adv_put_dquoted(&b, first);
  sp_adv_put(&b, "\nDiagnostics:\n");
  int nd = 0;
  for (int i = 0; i < n; i++) {
    if (a[i].nedits == 0) continue;
    char path[PATH_MAX];
    if (!realpath(a[i].nest->loc.file, path)) continue;
    sp_adv_finding f[SP_ADV_MAX_FINDINGS];
    int nf = sp_adv_findings(&a[i], arch, cc, f, SP_ADV_MAX_FINDINGS);
    const char *msg = "rewrite the pragmas to the recommended schedule";
    for (int k = 0; k < nf; k++)
      if (f[k].rule == SP_RULE_BETTER) msg = f[k].message;
    sp_adv_put(&b, "  - DiagnosticName:  schedpredict-better-schedule\n    DiagnosticMessage:\n"
                   "      Message:         ");
    sp_adv_put_dquoted(&b, msg);
    sp_adv_put(&b, "\n      FilePath:        ");
    sp_adv_put_dquoted(&b, path);
    sp_adv_put(&b, "\n      FileOffset:      %zu\n      Replacements:\n", a[i].edits[0].offset);
    for (int k = 0; k < a[i].nedits; k++) {
      sp_adv_put(&b, "        - FilePath:        ");
      sp_adv_put_dquoted(&b, path);
      sp_adv_put(&b, "\n          Offset:          %zu\n          Length:          %zu\n"
                     "          ReplacementText: ",
                 a[i].edits[k].offset, a[i].edits[k].length);
      sp_adv_put_dquoted(&b, a[i].edits[k].text);
      sp_adv_put(&b, "\n");
    }
    sp_adv_put(&b, "    Level:           Warning\n    BuildDirectory:  ");
    sp_adv_put_dquoted(&b, cwd);
    sp_adv_put(&b, "\n");
    nd++;
  }
  if (nd == 0) {
    /* an empty sequence, so the file stays valid YAML */
    b.len -= strlen("Diagnostics:\n");
    sp_adv_put(&b, "Diagnostics:     []\n");
  }
  sp_adv_put(&b, "...\n");
  return sp_adv_done(&b);
}
