/* Declarations shared by the analyzer's files; not part of the public API. */
#ifndef SP_ANALYZER_INTERNAL_H
#define SP_ANALYZER_INTERNAL_H

#include <stdarg.h>

#include "schedpredict/analyzer.h"
#include "schedpredict/ir.h"

struct sp_strpool;
const char *sp_strpool_intern(struct sp_strpool **pool, const char *s);
void sp_clauses_free(sp_clauses *c);
void sp_nest_free(sp_nest *n);
void sp_codegen_free(sp_codegen *cg);
char *sp_strdup_or_null(const char *s);
char *sp_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* pragma.c: one directive read from the token stream. */
typedef enum sp_directive_kind {
  SP_DIR_OTHER,         /* data, update, wait, ...: not a schedule */
  SP_DIR_ACC_PARALLEL,  /* region without loop */
  SP_DIR_ACC_KERNELS,
  SP_DIR_ACC_SERIAL,
  SP_DIR_ACC_PARALLEL_LOOP,
  SP_DIR_ACC_KERNELS_LOOP,
  SP_DIR_ACC_SERIAL_LOOP,
  SP_DIR_ACC_LOOP,
  SP_DIR_OMP_TARGET,      /* target [teams] region without a loop */
  SP_DIR_OMP_TARGET_LOOP, /* target teams distribute [parallel for] [simd] */
  SP_DIR_OMP_LOOP,        /* distribute / parallel for / for / simd inside a target region */
} sp_directive_kind;

typedef struct sp_directive {
  sp_directive_kind kind;
  sp_clauses clauses;
  unsigned begin_offset, end_offset; /* file offsets of '#' and of the end of the pragma */
  unsigned line, col;
  char *unknown; /* clauses it could not read, for a warning; NULL if none */
} sp_directive;

/* Parses the text after "#pragma" ("acc parallel loop gang ..."); returns false when the pragma
 * is not OpenACC or OpenMP (then *out is untouched). Clause arguments that are integers are
 * folded; others are left -1 and named in out->unknown. */
bool sp_directive_parse(const char *text, sp_directive *out);
const char *sp_directive_kind_name(sp_directive_kind k);

/* depend.c */
typedef enum sp_dep_result { SP_DEP_NONE, SP_DEP_POSSIBLE, SP_DEP_PROVEN } sp_dep_result;
typedef struct sp_dep_info {
  sp_dep_result result;
  int ref_a, ref_b;  /* the pair, indices into nest->refs */
  int64_t distance;  /* iterations of the loop between the two accesses (PROVEN only) */
} sp_dep_info;
/* Whether loop `loop` of the nest carries a dependence between array references. */
sp_dep_info sp_dep_test_loop(const sp_nest *nest, int loop);
/* Whether loop `loop` carries a dependence between iterations that differ in a loop M inside it
 * with inner[M] (the loops that would run on different threads): M, and the pair in *ref_a and
 * *ref_b; -1 where none can. */
int sp_dep_crossing(const sp_nest *nest, int loop, const bool *inner, int *ref_a, int *ref_b);
/* Min and max of an affine function over the box lo..hi of the loop indices (128-bit). */
void sp_affine_bounds(const sp_affine *a, int nloops, const int64_t *lo, const int64_t *hi,
                      __int128 *min, __int128 *max);
/* Index value range [lo, hi] of every loop (rectangular hull); false on overflow. */
bool sp_loop_ranges(const sp_nest *nest, int64_t *lo, int64_t *hi);
/* Lanes a launch can put past a loop's last iteration, at most: a grid dimension's 2^31 - 1
 * blocks (grid-stride steps and covering grids' last blocks stay below it). */
#define SP_INDEX_HEADROOM_LANES ((int64_t)1 << 31)
/* The first loop whose index, from its range lo..hi stepped SP_INDEX_HEADROOM_LANES steps past
 * its trip, leaves +-2^62, where the trace's index and bound arithmetic (sums and differences
 * of two such values) would wrap and let lanes past the end run; -1 where none does. */
int sp_loop_index_overflows(const sp_nest *nest, const int64_t *lo, const int64_t *hi);
/* Greatest common divisor of |a| and |b| (0 where both are 0). */
int64_t sp_gcd(int64_t a, int64_t b);

#endif
