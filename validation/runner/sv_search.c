/* schedvalidate tune: the searches (see sv_search.h).
   Why not GSL's multimin (gsl_multimin_fminimizer_nmsimplex2): it moves on real points and stops
   on the simplex size; OptACC's variant rounds every computed point onto the (multiple of 32,
   power of 2) lattice before it is timed and stops when a point repeats in the simplex, and
   neither hook exists in GSL. Each evaluation here is a GPU run, so the few lines of the lattice
   variant cost nothing next to it. */
#include "sv_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const grid_names[SV_N_GRIDS] = {"grid32", "grid64", "grid128", "grid32-vlpow2", "grid-pow2"};

int sv_grid_parse(const char *name) {
  for (int i = 0; i < SV_N_GRIDS; i++)
    if (!strcmp(name, grid_names[i])) return i;
  return -1;
}

const char *sv_grid_name(sv_grid_kind k) { return k < SV_N_GRIDS ? grid_names[k] : "?"; }

/* The values of one axis: multiples of step (step > 0) or powers of 2 (step == 0) in [lo, hi]. */
static size_t axis(long lo, long hi, long step, long *out) {
  size_t n = 0;
  if (step > 0) {
    for (long x = (lo + step - 1) / step * step; x <= hi; x += step)
      if (x > 0) {
        if (out) out[n] = x;
        n++;
      }
  } else {
    for (long x = 1; x <= hi && x > 0; x *= 2)
      if (x >= lo) {
        if (out) out[n] = x;
        n++;
      }
  }
  return n;
}

size_t sv_grid_points(sv_grid_kind k, const sv_bounds *b, sv_pt *out) {
  static const long gstep[SV_N_GRIDS] = {32, 64, 128, 32, 0}, vstep[SV_N_GRIDS] = {32, 64, 128, 0, 0};
  if (k >= SV_N_GRIDS) return 0;
  size_t ng = axis(b->g_lo, b->g_hi, gstep[k], NULL), nv = axis(b->v_lo, b->v_hi, vstep[k], NULL);
  if (!out) return ng * nv;
  long *gs = malloc((ng ? ng : 1) * sizeof *gs), *vs = malloc((nv ? nv : 1) * sizeof *vs);
  if (!gs || !vs) {
    free(gs);
    free(vs);
    return 0;
  }
  axis(b->g_lo, b->g_hi, gstep[k], gs);
  axis(b->v_lo, b->v_hi, vstep[k], vs);
  for (size_t i = 0; i < ng; i++)
    for (size_t j = 0; j < nv; j++) out[i * nv + j] = (sv_pt){gs[i], vs[j]};
  free(gs);
  free(vs);
  return ng * nv;
}

static long round_axis(long lo, long hi, long step, double x) {
  size_t n = axis(lo, hi, step, NULL);
  if (!n) return 0;
  long *vals = malloc(n * sizeof *vals);
  if (!vals) return 0;
  axis(lo, hi, step, vals);
  long best = vals[0];
  for (size_t i = 1; i < n; i++)
    if (fabs((double)vals[i] - x) <= fabs((double)best - x)) best = vals[i]; /* ascending: ties go up */
  free(vals);
  return best;
}

sv_pt sv_lattice_round(const sv_bounds *b, double g, double v) {
  return (sv_pt){round_axis(b->g_lo, b->g_hi, 32, g), round_axis(b->v_lo, b->v_hi, 0, v)};
}

void sv_bounds_include(sv_bounds *b, long g, long v) {
  /* the lattice values around g and v must be inside: a multiple of 32 and a power of 2 */
  long g_up = (g + 31) / 32 * 32, v_up = 1;
  while (v_up < v) v_up *= 2;
  if (g_up < 32) g_up = 32;
  if (g_up > b->g_hi) b->g_hi = g_up;
  if (g < b->g_lo) b->g_lo = g;
  if (v_up > b->v_hi) b->v_hi = v_up;
  if (v < b->v_lo) b->v_lo = v;
}

/* ---------------------------------------------------------------- evaluation */

void sv_eval_init(sv_eval *e, sv_objective f, void *ctx, long max_runs, double time_budget_s) {
  memset(e, 0, sizeof *e);
  e->f = f;
  e->ctx = ctx;
  e->max_runs = max_runs;
  e->time_budget_s = time_budget_s;
  e->best = -1;
}

void sv_eval_free(sv_eval *e) {
  free(e->pts);
  free(e->vals);
  e->pts = NULL;
  e->vals = NULL;
  e->n = e->cap = 0;
}

double sv_eval_at(sv_eval *e, sv_pt p) {
  for (size_t i = 0; i < e->n; i++)
    if (e->pts[i].g == p.g && e->pts[i].v == p.v) return e->vals[i];
  if (e->stopped || (e->max_runs > 0 && (long)e->n >= e->max_runs) ||
      (e->time_budget_s > 0 && e->spent_s >= e->time_budget_s)) {
    e->stopped = true;
    return INFINITY;
  }
  if (e->n == e->cap) {
    size_t nc = e->cap ? 2 * e->cap : 32;
    sv_pt *np = realloc(e->pts, nc * sizeof *np);
    if (np) e->pts = np;
    double *nv = realloc(e->vals, nc * sizeof *nv);
    if (nv) e->vals = nv;
    if (!np || !nv) {
      e->stopped = true;
      return INFINITY;
    }
    e->cap = nc;
  }
  double cost = 0, v = e->f(e->ctx, p, &cost);
  if (!(v == v)) v = INFINITY; /* NaN: failed */
  e->pts[e->n] = p;
  e->vals[e->n] = v;
  if (isfinite(v) && (e->best < 0 || v < e->vals[e->best])) e->best = (int)e->n;
  e->n++;
  e->spent_s += cost > 0 ? cost : 0;
  return v;
}

/* ---------------------------------------------------------------- searches */

void sv_search_grid(sv_eval *e, sv_grid_kind k, const sv_bounds *b) {
  size_t n = sv_grid_points(k, b, NULL);
  sv_pt *pts = malloc((n ? n : 1) * sizeof *pts);
  if (!pts) return;
  sv_grid_points(k, b, pts);
  for (size_t i = 0; i < n && !e->stopped; i++) sv_eval_at(e, pts[i]);
  free(pts);
}

typedef struct {
  double g, v;
} rpt;

static sv_pt to_lattice(const sv_bounds *b, rpt x) { return sv_lattice_round(b, x.g, x.v); }
static rpt to_real(sv_pt p) { return (rpt){(double)p.g, (double)p.v}; }
/* a + t (c - a) */
static rpt lerp(rpt a, rpt c, double t) { return (rpt){a.g + t * (c.g - a.g), a.v + t * (c.v - a.v)}; }
static bool same(sv_pt a, sv_pt b) { return a.g == b.g && a.v == b.v; }

/* Orders the simplex by value; equal values keep their order (the older vertex first). */
static void sort3(sv_pt x[3], double f[3]) {
  for (int i = 1; i < 3; i++)
    for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
      sv_pt tp = x[j];
      x[j] = x[j - 1];
      x[j - 1] = tp;
      double tf = f[j];
      f[j] = f[j - 1];
      f[j - 1] = tf;
    }
}

void sv_search_nelder_mead(sv_eval *e, const sv_bounds *b, sv_pt start, int max_iter) {
  const double rho = 1, chi = 2, gamma = 0.5, sigma = 0.5;
  sv_pt x[3];
  double f[3];
  x[0] = sv_lattice_round(b, (double)start.g, (double)start.v);
  /* The initial simplex: one step of 256 gangs and one doubling of the vector length away,
     backwards where that leaves the bounds (OptACC does not say how it builds its simplex). */
  x[1] = sv_lattice_round(b, (double)x[0].g + 256, (double)x[0].v);
  if (same(x[1], x[0])) x[1] = sv_lattice_round(b, (double)x[0].g - 256, (double)x[0].v);
  x[2] = sv_lattice_round(b, (double)x[0].g, 2.0 * (double)x[0].v);
  if (same(x[2], x[0])) x[2] = sv_lattice_round(b, (double)x[0].g, 0.5 * (double)x[0].v);
  for (int i = 0; i < 3; i++) f[i] = sv_eval_at(e, x[i]);
  for (int it = 0; it < max_iter && !e->stopped; it++) {
    if (same(x[0], x[1]) || same(x[0], x[2]) || same(x[1], x[2])) break; /* converged */
    sort3(x, f);
    rpt c = {0.5 * ((double)x[0].g + (double)x[1].g), 0.5 * ((double)x[0].v + (double)x[1].v)};
    rpt worst = to_real(x[2]);
    rpt xr_r = lerp(c, worst, -rho);
    sv_pt xr = to_lattice(b, xr_r);
    double fr = sv_eval_at(e, xr);
    if (e->stopped) break;
    if (f[0] <= fr && fr < f[1]) {
      x[2] = xr, f[2] = fr;
      continue;
    }
    if (fr < f[0]) {
      sv_pt xe = to_lattice(b, lerp(c, xr_r, chi));
      double fe = sv_eval_at(e, xe);
      if (fe < fr) x[2] = xe, f[2] = fe;
      else x[2] = xr, f[2] = fr;
      continue;
    }
    /* fr >= f[1]: contract, outside when the reflection beat the worst vertex, else inside */
    bool outside = fr < f[2];
    sv_pt xc = to_lattice(b, lerp(c, outside ? xr_r : worst, gamma));
    double fc = sv_eval_at(e, xc);
    if (e->stopped) break;
    if (outside ? fc <= fr : fc < f[2]) {
      x[2] = xc, f[2] = fc;
      continue;
    }
    for (int i = 1; i < 3 && !e->stopped; i++) { /* shrink towards the best */
      x[i] = to_lattice(b, lerp(to_real(x[0]), to_real(x[i]), sigma));
      f[i] = sv_eval_at(e, x[i]);
    }
  }
}

void sv_search_coordinate(sv_eval *e, const sv_bounds *b, sv_pt start) {
  sv_pt x = sv_lattice_round(b, (double)start.g, (double)start.v);
  double fx = sv_eval_at(e, x), step = 256;
  int fails = 0;
  while (fails < 2 && !e->stopped) {
    const double dg[4] = {step, -step, 0, 0}, dv[4] = {0, 0, step, -step};
    sv_pt best = x;
    double fbest = fx;
    for (int i = 0; i < 4 && !e->stopped; i++) {
      sv_pt y = sv_lattice_round(b, (double)x.g + dg[i], (double)x.v + dv[i]);
      if (same(y, x)) continue;
      double fy = sv_eval_at(e, y);
      if (fy < fbest) best = y, fbest = fy;
    }
    if (e->stopped) break;
    if (fbest < fx) {
      x = best, fx = fbest;
      fails = 0;
    } else {
      step *= 0.75;
      fails++;
    }
  }
}

double sv_pct(const double *grid, size_t n, double t) {
  size_t ok = 0, faster = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(grid[i])) {
      ok++;
      faster += grid[i] < t;
    }
  if (!ok || !isfinite(t)) return NAN;
  return 100.0 * (double)faster / (double)ok;
}
