/* What an OpenACC compiler can state of a schedule.
 *
 * Both compilers map gang to blockIdx.x, worker to threadIdx.y and vector to threadIdx.x, and the
 * levels nest gang outside worker outside vector (one loop may carry several, in that order).
 * So a schedule is expressible when it uses no y/z grid and no threadIdx.z, and its loops, read
 * outermost first, take the levels in that order (possibly after interchanging parallel,
 * rectangular band loops).
 *
 * GCC (gcc/config/nvptx/nvptx.cc, libgomp's nvptx plugin): vector_length must be a multiple of 32
 * (otherwise GCC silently uses 32) and at most 1024; num_workers at most 32, and at most 15 when
 * vector_length > 32 (16 CTA barriers); num_workers x vector_length <= 1024.
 * nvc: warps of 32, so vector_length a multiple of 32; num_workers x vector_length <= 1024. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "schedpredict/advice.h"

enum { SP_ADV_GANG = 1, SP_ADV_WORKER = 2, SP_ADV_VECTOR = 4 };

const char *sp_adv_compiler_name(sp_adv_compiler c) { return c == SP_ADV_NVC ? "nvc" : "gcc"; }

static int sp_adv_lowest(unsigned m) { return m & 1 ? 0 : m & 2 ? 1 : 2; }
static int sp_adv_highest(unsigned m) { return m & 4 ? 2 : m & 2 ? 1 : 0; }

static bool sp_adv_rectangular_in(const sp_nest *nest, int k, int first, int last) {
  for (int j = first; j <= last; j++)
    if (nest->loops[k].lower.coef[j] || nest->loops[k].upper.coef[j]) return false;
  return true;
}

int sp_adv_reduction_items(const char *text, char items[][SP_ADV_RED_ITEM], int max) {
  int n = 0;
  for (const char *c = text; c && *c;) {
    const char *end = strchr(c, ';'), *colon = strchr(c, ':');
    if (!end) end = c + strlen(c);
    if (colon && colon < end) {
      const char *o = c, *oe = colon;
      while (o < oe && *o == ' ') o++;
      while (oe > o && oe[-1] == ' ') oe--;
      for (const char *v = colon + 1; v < end;) {
        const char *ve = v;
        for (int depth = 0; ve < end && (depth > 0 || *ve != ','); ve++)
          depth += *ve == '[' || *ve == '(' ? 1 : *ve == ']' || *ve == ')' ? -1 : 0;
        const char *vs = v, *vz = ve;
        while (vs < vz && *vs == ' ') vs++;
        while (vz > vs && vz[-1] == ' ') vz--;
        if (vz > vs) {
          if (n == max) return -1;
          int len = snprintf(items[n], SP_ADV_RED_ITEM, "%.*s:%.*s", (int)(oe - o), o,
                             (int)(vz - vs), vs);
          if (len < 0 || len >= SP_ADV_RED_ITEM) return -1;
          n++;
        }
        v = ve < end ? ve + 1 : end;
      }
    }
    c = *end ? end + 1 : end;
  }
  return n;
}

static bool sp_adv_red_in(char items[][SP_ADV_RED_ITEM], int n, const char *item) {
  for (int i = 0; i < n; i++)
    if (strcmp(items[i], item) == 0) return true;
  return false;
}

static bool sp_adv_red_has(const char *list, const char *item) {
  char items[SP_ADV_RED_MAX][SP_ADV_RED_ITEM];
  return sp_adv_red_in(items, sp_adv_reduction_items(list, items, SP_ADV_RED_MAX), item);
}

/* Adds text's items that list (n bytes) lacks; false when they do not fit. */
static bool sp_adv_red_add(char *list, size_t n, const char *text) {
  char have[SP_ADV_RED_MAX][SP_ADV_RED_ITEM], items[SP_ADV_RED_MAX][SP_ADV_RED_ITEM];
  int h = sp_adv_reduction_items(list, have, SP_ADV_RED_MAX);
  int m = sp_adv_reduction_items(text, items, SP_ADV_RED_MAX);
  if (m < 0 || h < 0) return false;
  for (int i = 0; i < m; i++) {
    if (sp_adv_red_in(have, h, items[i])) continue;
    size_t u = strlen(list);
    int w = snprintf(list + u, n - u, "%s%s", u ? "; " : "", items[i]);
    if (w < 0 || (size_t)w >= n - u || h == SP_ADV_RED_MAX) return false;
    memcpy(have[h++], items[i], SP_ADV_RED_ITEM);
  }
  return true;
}

bool sp_adv_reduction_clauses(const sp_adv_plan *p, int pos, const char *have, char *buf,
                              size_t n) {
  char items[SP_ADV_RED_MAX][SP_ADV_RED_ITEM], named[SP_ADV_RED_MAX][SP_ADV_RED_ITEM];
  int m = sp_adv_reduction_items(p->reduction[pos], items, SP_ADV_RED_MAX);
  int h = sp_adv_reduction_items(have, named, SP_ADV_RED_MAX);
  bool done[SP_ADV_RED_MAX] = {false};
  size_t u = strlen(buf);
  for (int i = 0; i < m; i++) {
    if (done[i] || sp_adv_red_in(named, h, items[i])) continue;
    size_t oplen = (size_t)(strchr(items[i], ':') - items[i]);
    int w = snprintf(buf + u, n - u, " reduction(%s", items[i]);
    if (w < 0 || (size_t)w >= n - u) return false;
    u += (size_t)w;
    for (int j = i + 1; j < m; j++) {
      if (done[j] || strncmp(items[j], items[i], oplen + 1) || sp_adv_red_in(named, h, items[j]))
        continue;
      done[j] = true;
      w = snprintf(buf + u, n - u, ",%s", items[j] + oplen + 1);
      if (w < 0 || (size_t)w >= n - u) return false;
      u += (size_t)w;
    }
    w = snprintf(buf + u, n - u, ")");
    if (w < 0 || (size_t)w >= n - u) return false;
    u += (size_t)w;
  }
  return true;
}

bool sp_adv_gcc_kernels(const sp_nest *nest, sp_adv_compiler cc) {
  return cc == SP_ADV_GCC && nest->construct == SP_CONSTRUCT_ACC_KERNELS;
}

/* In a kernels region a loop without `independent` is `auto` (OpenACC 2.9.7), which GCC 12 runs
 * sequentially, gang/worker/vector or not; with --param=openacc-kernels=decompose it partitions
 * the independent ones. So loops first..first+count-1 get the clause where the dependence test
 * proved them all independent and the directive does not say it already. */
static bool sp_adv_gcc_needs_independent(const sp_nest *nest, sp_adv_compiler cc, int first,
                                         int count) {
  if (!sp_adv_gcc_kernels(nest, cc) || (nest->loops[first].clauses.flags & SP_CL_INDEPENDENT))
    return false;
  for (int k = first; k < first + count && k < nest->nloops; k++)
    if (nest->loops[k].parallel_reason != SP_PAR_TEST_PROVED) return false;
  return true;
}

#define SP_ADV_WHY(...)                                                                         \
  do {                                                                                          \
    if (why && whylen) snprintf(why, whylen, __VA_ARGS__);                                      \
    return false;                                                                               \
  } while (0)

bool sp_adv_express(const sp_nest *nest, const sp_schedule *s, sp_adv_compiler cc,
                    sp_adv_plan *plan, char *why, size_t whylen) {
  const char *cn = cc == SP_ADV_NVC ? "nvc" : "GCC";
  memset(plan, 0, sizeof *plan);
  if (why && whylen) why[0] = 0;
  if (s->grid[1] > 1 || s->grid[2] > 1)
    SP_ADV_WHY("it needs a %s-D grid; %s puts gangs on blockIdx.x only", s->grid[2] > 1 ? "3" : "2",
               cn);
  if (s->block[2] > 1) SP_ADV_WHY("it needs threadIdx.z, which OpenACC has no level for");
  int V = s->block[0], W = s->block[1];
  if (V % 32 != 0 || V > 1024)
    SP_ADV_WHY("vector_length(%d) is not a multiple of 32 up to 1024%s", V,
               cc == SP_ADV_GCC ? " (GCC would use 32 instead)" : "");
  if (cc == SP_ADV_GCC && W > 32) SP_ADV_WHY("GCC allows at most 32 workers, not %d", W);
  if (cc == SP_ADV_GCC && W > 15 && V > 32)
    SP_ADV_WHY("GCC allows at most 15 workers with vector_length(%d) > 32 (barriers)", V);
  if ((int64_t)W * V > 1024) SP_ADV_WHY("num_workers x vector_length = %d exceeds 1024", W * V);

  /* units: band loops that carry a level (a collapse group counts once, by its first loop) */
  int nb = s->nband, nu = 0, ufirst[SP_MAX_LOOPS], ucount[SP_MAX_LOOPS];
  unsigned umask[SP_MAX_LOOPS];
  for (int k = 0; k < nb; k++) {
    const sp_loop_map *m = &s->map[k];
    bool grouped = s->collapse_count >= 2 && k == s->collapse_first;
    if (m->thread_dim < 0 && m->block_dim < 0) continue;
    unsigned mask = 0;
    if (m->block_dim == 0) mask |= SP_ADV_GANG;
    if (m->thread_dim == 1) mask |= SP_ADV_WORKER;
    if (m->thread_dim == 0) mask |= SP_ADV_VECTOR;
    ufirst[nu] = k;
    ucount[nu] = grouped ? s->collapse_count : 1;
    umask[nu++] = mask;
  }
  if (nu == 0) SP_ADV_WHY("no loop is mapped to the GPU");
  /* loops below the band that the user partitioned keep their levels: the band must stay
   * outside them */
  for (int k = nb; k < nest->nloops; k++) {
    unsigned f = nest->loops[k].clauses.flags, inner = 0;
    if (f & SP_CL_GANG) inner |= SP_ADV_GANG;
    if (f & SP_CL_WORKER) inner |= SP_ADV_WORKER;
    if (f & SP_CL_VECTOR) inner |= SP_ADV_VECTOR;
    /* A bare `acc loop` below the band (mvt's inner reduction loop) is independent in a parallel
     * construct, and both compilers give it the innermost level left: a band that takes vector
     * leaves it none (GCC: "insufficient partitioning available to parallelize loop") and runs it
     * sequentially; on the H100 that fix was 0.45x (validation/results/h100/gcc-openacc/). */
    bool bare = nest->loops[k].clauses.directive && nest->loops[k].parallel &&
                !(f & (SP_CL_GANG | SP_CL_WORKER | SP_CL_VECTOR | SP_CL_SEQ | SP_CL_AUTO));
    for (int i = 0; bare && i < nu; i++)
      if (umask[i] & SP_ADV_VECTOR)
        SP_ADV_WHY("loop %s inside the nest is an 'acc loop' the compiler would run on the "
                   "vector lanes; this schedule takes them",
                   nest->loops[k].index);
    for (int i = 0; inner && i < nu; i++)
      if (sp_adv_highest(umask[i]) >= sp_adv_lowest(inner))
        SP_ADV_WHY("loop %s inside the nest already uses %s parallelism", nest->loops[k].index,
                   inner & SP_ADV_GANG ? "gang" : inner & SP_ADV_WORKER ? "worker" : "vector");
  }
  /* the order the levels need: by lowest level, stable */
  int order[SP_MAX_LOOPS];
  for (int i = 0; i < nu; i++) order[i] = i;
  for (int i = 1; i < nu; i++)
    for (int j = i; j > 0 && sp_adv_lowest(umask[order[j]]) < sp_adv_lowest(umask[order[j - 1]]);
         j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 1; i < nu; i++)
    if (sp_adv_highest(umask[order[i - 1]]) >= sp_adv_lowest(umask[order[i]]))
      SP_ADV_WHY("its loops would need %s inside %s, but OpenACC nests gang outside worker "
                 "outside vector",
                 umask[order[i]] & SP_ADV_GANG ? "gang" : "worker",
                 umask[order[i - 1]] & SP_ADV_VECTOR ? "vector" : "worker");
  bool moved = false;
  for (int i = 0; i < nu; i++) moved |= order[i] != i;
  for (int k = 0; k < SP_MAX_LOOPS; k++) plan->perm[k] = k;
  plan->nband = nb;
  if (moved) {
    /* loops first..last are permuted: all parallel, none's bounds use another one's index, and
     * all inside the same reductions (a reduction on a loop spans the loops inside it; one that
     * starts inside the permuted loops would cover different loops after the move) */
    int first = ufirst[0], last = ufirst[nu - 1] + ucount[nu - 1] - 1;
    char outer[sizeof plan->reduction[0]] = "";
    for (int k = 0; k <= first; k++)
      if (!sp_adv_red_add(outer, sizeof outer, nest->loops[k].clauses.reduction))
        SP_ADV_WHY("its reduction clauses are too long to carry to other loops");
    for (int k = first; k <= last; k++) {
      const sp_loop *l = &nest->loops[k];
      if (!l->parallel)
        SP_ADV_WHY("it needs the loops interchanged across sequential loop %s", l->index);
      if (k > first && l->imperfect)
        SP_ADV_WHY("it needs the loops interchanged, but loop %s is not the only statement in "
                   "the body of loop %s", l->index, nest->loops[l->parent].index);
      if (!sp_adv_rectangular_in(nest, k, first, last))
        SP_ADV_WHY("it needs the loops interchanged, but the bounds of %s depend on an outer "
                   "index", l->index);
      char items[SP_ADV_RED_MAX][SP_ADV_RED_ITEM];
      int m = sp_adv_reduction_items(l->clauses.reduction, items, SP_ADV_RED_MAX);
      for (int i = 0; i < m; i++)
        if (!sp_adv_red_has(outer, items[i]))
          SP_ADV_WHY("it needs the loops interchanged, but %s has a reduction (%s) that loop %s "
                     "outside it does not have",
                     l->index, items[i], nest->loops[first].index);
    }
    int p = first;
    for (int i = 0; i < nu; i++)
      for (int c = 0; c < ucount[order[i]]; c++) plan->perm[p++] = ufirst[order[i]] + c;
    plan->interchange = true;
  }
  /* clauses by position */
  for (int p = 0; p < nb; p++) plan->clauses[p][0] = 0;
  for (int p = 0; p < nb; p++) {
    int k = plan->perm[p];
    int u = -1;
    for (int i = 0; i < nu; i++)
      if (ufirst[i] == k) u = i;
    char *c = plan->clauses[p];
    size_t cl = sizeof plan->clauses[p];
    if (u < 0) {
      if (sp_schedule_collapsed_away(s, k)) snprintf(c, cl, "-");
      else if (nest->loops[k].parallel) snprintf(c, cl, "seq"); /* beyond the 3 mapped loops */
      continue;
    }
    char coll[24] = "";
    if (ucount[u] > 1) snprintf(coll, sizeof coll, "collapse(%d) ", ucount[u]);
    snprintf(c, cl, "%s%s%s%s", coll, umask[u] & SP_ADV_GANG ? "gang " : "",
             umask[u] & SP_ADV_WORKER ? "worker " : "", umask[u] & SP_ADV_VECTOR ? "vector " : "");
    c[strlen(c) - 1] = 0; /* the trailing space */
    if (sp_adv_gcc_needs_independent(nest, cc, k, ucount[u])) {
      size_t u2 = strlen(c);
      snprintf(c + u2, cl - u2, " independent");
    }
    if (umask[u] & SP_ADV_WORKER) plan->num_workers = W;
  }
  /* reductions by position: those of every loop at or outside the deepest loop the directive
   * partitions (its collapsed loops included) */
  for (int p = 0; p < nb; p++) {
    plan->reduction[p][0] = 0;
    if (!plan->clauses[p][0] || strcmp(plan->clauses[p], "-") == 0) continue;
    int deepest = plan->perm[p];
    for (int q = p + 1; q < nb && strcmp(plan->clauses[q], "-") == 0; q++)
      if (plan->perm[q] > deepest) deepest = plan->perm[q];
    for (int k = 0; k <= deepest; k++)
      if (!sp_adv_red_add(plan->reduction[p], sizeof plan->reduction[p],
                          nest->loops[k].clauses.reduction))
        SP_ADV_WHY("its reduction clauses are too long to carry to other loops");
  }
  plan->num_gangs = s->grid[0];
  plan->vector_length = V;
  return true;
}

bool sp_adv_gangs_launch(const sp_nest *nest, const sp_adv_plan *plan, sp_adv_compiler cc,
                         char *why, size_t whylen) {
  if (why && whylen) why[0] = 0;
  const bool acc = nest->construct == SP_CONSTRUCT_ACC_PARALLEL ||
                   nest->construct == SP_CONSTRUCT_ACC_KERNELS ||
                   nest->construct == SP_CONSTRUCT_ACC_SERIAL;
  if (acc && cc == SP_ADV_GCC && plan->num_gangs > SP_ADV_GCC_MAX_GANGS)
    SP_ADV_WHY("GCC's libgomp does not launch num_gangs(%" PRId64 ") (more than %d): it launches "
               "its default count and the gang loop skips the other gangs' rows (wrong results)",
               plan->num_gangs, SP_ADV_GCC_MAX_GANGS);
  return true;
}

/* The value a clause has on the nest: on the compute construct, or on loop 0 of a combined one,
 * or as a loop argument (kernels). */
static int64_t sp_adv_current(const sp_nest *nest, size_t field) {
  const int64_t *c = (const int64_t *)((const char *)&nest->construct_clauses + field);
  const int64_t *l = (const int64_t *)((const char *)&nest->loops[0].clauses + field);
  return *c > 0 ? *c : *l > 0 ? *l : 0;
}

bool sp_adv_plan_matches(const sp_nest *nest, const sp_adv_plan *p) {
  if (p->interchange || nest->nloops < p->nband || p->nband < 1) return false;
  int64_t workers = 0, vector = 0, gangs = 0;
  for (int pos = 0; pos < p->nband; pos++) {
    const sp_clauses *c = &nest->loops[pos].clauses;
    const char *want = p->clauses[pos];
    if (!want[0]) continue;
    if (strstr(want, "independent")) return false; /* only added where the directive lacks it */
    unsigned have = c->flags & (SP_CL_GANG | SP_CL_WORKER | SP_CL_VECTOR | SP_CL_SEQ);
    if (strcmp(want, "-") == 0) {
      if (have) return false;
      continue;
    }
    unsigned flags = 0;
    int collapse = 0;
    if (strstr(want, "gang")) flags |= SP_CL_GANG;
    if (strstr(want, "worker")) flags |= SP_CL_WORKER;
    if (strstr(want, "vector")) flags |= SP_CL_VECTOR;
    if (strstr(want, "seq")) flags |= SP_CL_SEQ;
    if (sscanf(want, "collapse(%d)", &collapse) != 1) collapse = 0;
    if (have != flags || c->collapse != collapse) return false;
    if (c->gang_arg > 0) gangs = c->gang_arg;
    if (c->worker_arg > 0) workers = c->worker_arg;
    if (c->vector_arg > 0) vector = c->vector_arg;
  }
  if (!gangs) gangs = sp_adv_current(nest, offsetof(sp_clauses, num_gangs));
  if (!workers) workers = sp_adv_current(nest, offsetof(sp_clauses, num_workers));
  if (!vector) vector = sp_adv_current(nest, offsetof(sp_clauses, vector_length));
  return gangs == p->num_gangs && workers == p->num_workers && vector == p->vector_length;
}
