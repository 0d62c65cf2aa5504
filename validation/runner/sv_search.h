/* schedvalidate tune: OptACC's searches over (num_gangs, vector_length) as pure C over an
   objective callback (no CUDA here): the grids of its Table 1, its modified Nelder-Mead on the
   integer lattice and its Coordinate Search, with a per-method memo, run and time budgets. */
#ifndef SV_SEARCH_H
#define SV_SEARCH_H
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  long g, v;
} sv_pt;

typedef struct {
  long g_lo, g_hi, v_lo, v_hi; /* inclusive; OptACC's defaults are 2..1024 for both */
} sv_bounds;

typedef enum { SV_GRID32, SV_GRID64, SV_GRID128, SV_GRID32_VLPOW2, SV_GRID_POW2, SV_N_GRIDS } sv_grid_kind;

/* "grid32", ... -> kind, or -1. */
int sv_grid_parse(const char *name);
const char *sv_grid_name(sv_grid_kind k);
/* The grid's points in order (gangs outer, vector inner, both ascending) into out (may be NULL:
   only counted). Returns the count. */
size_t sv_grid_points(sv_grid_kind k, const sv_bounds *b, sv_pt *out);

/* The lattice the direct searches move on: gangs a multiple of 32, vector a power of 2, both
   inside the bounds. A real point goes to the nearest lattice value in each coordinate (linear
   distance; a tie goes up); outside the bounds to the nearest end. An empty lattice (no multiple
   of 32 or power of 2 inside the bounds) gives g or v = 0. */
sv_pt sv_lattice_round(const sv_bounds *b, double g, double v);
/* Widens b so that the lattice holds p rounded (a model seed outside the default bounds). */
void sv_bounds_include(sv_bounds *b, long g, long v);

/* The objective: the time (any unit; smaller is better) of point p, or INFINITY when the point
   failed. *cost_s gets what the evaluation cost (seconds) for the time budget. */
typedef double (*sv_objective)(void *ctx, sv_pt p, double *cost_s);

typedef struct {
  sv_objective f;
  void *ctx;
  long max_runs;        /* <= 0: no limit */
  double time_budget_s; /* <= 0: no limit */
  /* results: the distinct points in evaluation order and their values */
  sv_pt *pts;
  double *vals;
  size_t n, cap;
  double spent_s;
  bool stopped; /* a budget ran out: a search stops at its next step */
  int best;     /* index into pts of the smallest finite value, -1 none */
} sv_eval;

void sv_eval_init(sv_eval *e, sv_objective f, void *ctx, long max_runs, double time_budget_s);
void sv_eval_free(sv_eval *e);
/* f(p) once per distinct point (later requests are answered from the memo). When a budget is
   spent, sets stopped and answers INFINITY without evaluating. */
double sv_eval_at(sv_eval *e, sv_pt p);

/* Every point of the grid, in sv_grid_points' order (until a budget stops it). */
void sv_search_grid(sv_eval *e, sv_grid_kind k, const sv_bounds *b);
/* OptACC's modified Nelder-Mead from start (rounded onto the lattice); rho=1, chi=2, gamma=0.5,
   sigma=0.5. Converged when a point appears twice in the simplex, or after max_iter steps. */
void sv_search_nelder_mead(sv_eval *e, const sv_bounds *b, sv_pt start, int max_iter);
/* Coordinate Search from start: step 256, the four neighbours, move to the best improving one,
   else step *= 0.75; stops after two consecutive failures. */
void sv_search_coordinate(sv_eval *e, const sv_bounds *b, sv_pt start);

/* OptACC's Pct: the percentage of the finite values in grid[0..n) strictly smaller than t
   (0 = as good as the grid's best). NaN when the grid has no finite value or t is not finite. */
double sv_pct(const double *grid, size_t n, double t);
#endif
