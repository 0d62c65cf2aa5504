/* Advice: the stage after rank/. Turns a nest's ranked candidates into what one OpenACC compiler
 * can state (the best expressible schedule, its clauses per loop), into source edits of the
 * user's pragmas (--fix, --fix=diff, --export-fixes) and into the formats editors, CI and
 * compiler tooling read (clang remarks, SARIF 2.1.0, LLVM optimization records). Prefix sp_adv_. */
#ifndef SCHEDPREDICT_ADVICE_H
#define SCHEDPREDICT_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "schedpredict/arch.h"
#include "schedpredict/ir.h"
#include "schedpredict/rank.h"

/* A rewrite must be predicted at least this much faster than the compiler default. */
#define SP_ADV_MIN_GAIN 1.05

typedef enum sp_adv_compiler { SP_ADV_GCC, SP_ADV_NVC } sp_adv_compiler;

const char *sp_adv_compiler_name(sp_adv_compiler c);

/* One schedule written as OpenACC for one compiler. Positions are the band loops after any
 * interchange: position p holds loop perm[p] of the nest. */
typedef struct sp_adv_plan {
  int nband;
  bool interchange;
  int perm[SP_MAX_LOOPS];
  /* the partitioning clauses of the loop directive at position p, e.g. "collapse(2) gang vector",
   * "worker", "seq"; "" = a sequential band loop left as written; "-" = collapsed into the loop
   * above (it must have no directive) */
  char clauses[SP_MAX_LOOPS][64];
  /* the reductions the directive at position p must carry, one "op:var" each, joined by "; "
   * ("+:s; max:err"): a reduction on a band loop spans the loops inside it (the band is
   * perfectly nested), and OpenACC wants its clause on every loop directive of that span, so a
   * split collapse or an interchange carries it to the directives it creates */
  char reduction[SP_MAX_LOOPS][160];
  int64_t num_gangs;
  int num_workers; /* 0: no worker loop (no num_workers clause) */
  int vector_length;
} sp_adv_plan;

/* Fills plan when the compiler can state schedule s on nest (interchanging band loops when that
 * is needed and legal); otherwise returns false with the reason in why. */
bool sp_adv_express(const sp_nest *nest, const sp_schedule *s, sp_adv_compiler cc,
                    sp_adv_plan *plan, char *why, size_t whylen);
/* A nest GCC 12 runs on one GPU thread as written: an OpenACC kernels region under --compiler
 * gcc (see sp_adv_gcc_needs_independent in plan.c). */
bool sp_adv_gcc_kernels(const sp_nest *nest, sp_adv_compiler cc);
/* Whether the compiler's runtime launches the gangs plan asks for of an OpenACC nest. GCC 12's libgomp launches its
 * default gang count (16,896 for 8 x 32 threads on the H200) in place of a num_gangs of 65,536 or
 * more, while the gang loop strides by the count asked for: the rows of the gangs not launched
 * are skipped, wrong results (20,000 and 10,000 ran right; validation/results/h200/gcc-openacc/
 * 2026-12-02-imperfect-fix). */
#define SP_ADV_GCC_MAX_GANGS 65535
bool sp_adv_gangs_launch(const sp_nest *nest, const sp_adv_plan *plan, sp_adv_compiler cc,
                         char *why, size_t whylen);

/* Appends " reduction(op:v,w)" to buf (length n, NUL-terminated) for each item of the plan's
 * reductions at position pos that the clause text `have` (the directive's own reduction clause
 * in the analyzer's form, or NULL) does not already name. Returns false when buf is too short. */
bool sp_adv_reduction_clauses(const sp_adv_plan *p, int pos, const char *have, char *buf,
                              size_t n);

/* A reduction clause's text as the analyzer keeps it ("+:a,b; max: m") as "op:var" items (a
 * var may be a subarray, "+:h[0:n]"), at most max. Returns their number, -1 when there are more
 * or one is longer than SP_ADV_RED_ITEM - 1 characters. SP_ADV_RED_MAX items fill a plan
 * position's reduction text. */
enum { SP_ADV_RED_ITEM = 96, SP_ADV_RED_MAX = 32 };
int sp_adv_reduction_items(const char *text, char items[][SP_ADV_RED_ITEM], int max);

/* The time a compiler's reduction code adds to schedule s of nest (advice/lowering.c: GCC 12's
 * compare-and-swap folds, from the arch's cas_* fields), seconds; 0 for nvc, for a schedule the
 * compiler cannot state, without reductions or without those fields. st: the schedule's trace
 * (working blocks, blocks resident per SM), or NULL. */
typedef struct sp_adv_lowering {
  double vector_s; /* the vector loop's lanes folding into one shared-memory word */
  double gang_s;   /* the gangs folding into the global word */
} sp_adv_lowering;
double sp_adv_lowering_s(const sp_nest *nest, const sp_schedule *s, const sp_trace_stats *st,
                         const sp_arch *arch, sp_adv_compiler cc, sp_adv_lowering *parts);

/* A candidate's predicted time as the compiler builds it: the model's, plus what the compiler's
 * reduction code adds (time.lowering_s, filled by the ranking from sp_adv_lowering_s). */
double sp_adv_built_s(const sp_rank_candidate *c);

/* Whether the nest's pragmas already state the plan (nothing to rewrite). */
bool sp_adv_plan_matches(const sp_nest *nest, const sp_adv_plan *plan);

/* Candidates predicted within this factor of the fastest expressible one count as equally good:
 * the one the pragmas already state is kept (so a second --fix changes nothing). */
#define SP_ADV_TIE 1.02

/* A source edit: replace length bytes at offset of file with text. */
typedef struct sp_adv_edit {
  const char *file;
  size_t offset, length;
  char *text;
} sp_adv_edit;

/* The advice for one nest. */
typedef struct sp_adv_nest {
  const sp_nest *nest;
  const sp_rank_result *rank; /* NULL: the nest was not ranked */
  int candidate;              /* recommended candidate (index into rank->candidates), or -1 */
  int rank_pos;               /* its position in rank->order (0: the model's overall best) */
  char best_why_not[256];     /* why the overall best is not expressible; "" when it is */
  bool no_gain; /* the recommendation is not SP_ADV_MIN_GAIN faster than the compiler default */
  sp_adv_plan plan;
  /* the rewrite; when fix_error is set the nest's pragmas are left alone */
  char fix_error[256];
  int nedits;
  sp_adv_edit *edits;
  /* the directive text each band position gets after the fix (NULL: none), and the separate
   * compute-construct directive (NULL when combined with loop 0 or unchanged) */
  char *directive[SP_MAX_LOOPS];
  char *construct_directive;
} sp_adv_nest;

/* The clause text the compute construct gets: "num_gangs(G) [num_workers(W)] vector_length(V)". */
void sp_adv_construct_clauses(const sp_adv_plan *p, char *buf, size_t n);

typedef struct sp_adv_options {
  sp_adv_compiler compiler;
} sp_adv_options;

/* The advice for every nest: the best candidate the compiler can state and the edits that write
 * it into the source. files: the source text is read from disk. Returns 0, -1 on allocation
 * failure. Release with sp_adv_free. */
int sp_adv_build(const sp_report_nest *rows, int n, const sp_adv_options *opt, sp_adv_nest **out);
void sp_adv_free(sp_adv_nest *a, int n);

/* Every edit of every nest for one file, sorted, the later of two overlapping edits dropped with
 * a warning on diag_out (NULL: silent). Returns the number of edits in *out (malloc'd; the texts
 * are borrowed from the nests). */
int sp_adv_file_edits(const sp_adv_nest *a, int n, const char *file, sp_adv_edit **out,
                      FILE *diag_out);
/* The file's text with the edits applied (malloc'd), NULL if it cannot be read. */
char *sp_adv_apply(const char *file, const sp_adv_edit *edits, int nedits);
/* The distinct files that have nests, in order of first appearance; returns the count. */
int sp_adv_files(const sp_adv_nest *a, int n, const char ***out);

/* Reads a whole file (malloc'd, NUL-terminated; *len its size), NULL on failure. */
char *sp_adv_read_file(const char *path, size_t *len);

/* Renderers (advice/formats.c). Each returns a malloc'd string, NULL on allocation failure. */
/* the "recommended" block of the text report, and the "advice" member of the JSON report */
char *sp_adv_text(const sp_adv_nest *a, const sp_arch *arch, sp_adv_compiler cc);
char *sp_adv_json(const sp_adv_nest *a, const sp_arch *arch, sp_adv_compiler cc);
/* one clang-style remark line per nest */
char *sp_adv_remarks(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc);
char *sp_adv_sarif(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc);
char *sp_adv_opt_record(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc);
/* clang-tidy's export-fixes YAML for clang-apply-replacements (absolute paths). */
char *sp_adv_export_fixes(const sp_adv_nest *a, int n, const sp_arch *arch, sp_adv_compiler cc);

/* Writing the fixes (advice/output.c). */
typedef enum sp_adv_fix_mode { SP_ADV_FIX_NONE, SP_ADV_FIX_WRITE, SP_ADV_FIX_DIFF } sp_adv_fix_mode;
typedef struct sp_adv_fix_options {
  sp_adv_fix_mode mode;
  const char *output; /* -o: write the fixed file there instead (one input file only) */
  bool backup;        /* keep FILE.orig when rewriting FILE in place */
  bool force;         /* allow replacing an existing -o file or FILE.orig */
  bool quiet;
} sp_adv_fix_options;

/* Applies every nest's edits; --fix=diff prints a unified diff on stdout instead. Returns an exit
 * code (SP_EXIT_* of analyzer.h); messages go to stderr. */
int sp_adv_fix_files(const sp_adv_nest *a, int n, const sp_adv_fix_options *o);

/* Writes len bytes to path through a temporary file in the same folder and a rename, keeping
 * the mode of an existing file. 0, or -1 with errno set. */
int sp_adv_write_atomic(const char *path, const char *text, size_t len);

#endif
