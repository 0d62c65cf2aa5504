/* Validation, analysis side: the plan (validation/FORMATS.md), per nest the CUDA source of every
 * selected candidate, with the model's predictions, for a runner that has only the CUDA toolkit.
 * Prefix sp_plan_. */
#ifndef SCHEDPREDICT_PLAN_H
#define SCHEDPREDICT_PLAN_H

#include <stddef.h>

#include "schedpredict/diag.h"
#include "schedpredict/rank.h"

#define SP_PLAN_SCHEMA_VERSION 1
#define SP_PLAN_DEFAULT_TOP 20
#define SP_PLAN_DEFAULT_SAMPLE 20

typedef struct sp_plan_options {
  int top;             /* the model's best N candidates; < 0: the default */
  int sample;          /* plus M evenly spaced by rank over the rest; < 0: the default */
  const char *command; /* the command line, recorded in "generator" */
} sp_plan_options;

/* Why the nest cannot be generated, or NULL (with the location in *loc). */
const char *sp_plan_not_generated(const sp_nest *nest, sp_srcloc *loc);

/* Shared by every candidate of the nest: macros, types, reduction helpers (malloc'd). */
char *sp_plan_prelude(const sp_nest *nest);

/* The extern "C" __global__ kernel `name` running the nest under schedule s (malloc'd; NULL if
 * the nest cannot be generated). Every band iteration calls SP_ITERATION(indices...) before the
 * body; the prelude defines it empty (a CPU emulation defines it to count iterations). */
char *sp_plan_kernel_source(const sp_nest *nest, const sp_schedule *s, const char *name);
/* Whether the harness can generate schedule s: it maps no imperfect loop (sp_loop.imperfect),
 * whose surrounding statements the kernel would have to place. */
bool sp_plan_generates(const sp_nest *nest, const sp_schedule *s);

/* The candidates to run, as indices into r->candidates: ranks 1..top, then `sample` evenly spaced
 * over the remaining ranks, then both compiler defaults (GCC's, nvc's) if not yet in; all when
 * top + sample cover the space. Returns the count (out needs r->n + 1 entries) and describes the
 * choice in desc. */
int sp_plan_select(const sp_rank_result *r, int top, int sample, int *out, char *desc,
                   size_t desclen);

/* The plan as JSON text (malloc'd, NULL on allocation failure). Nests that cannot be generated
 * or were not ranked go to "skipped" with a warning through diag. */
char *sp_plan_json(const sp_report_nest *nests, int n, const sp_arch *arch,
                   const sp_plan_options *opt, sp_diag *diag);

#endif
