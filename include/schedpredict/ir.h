/* The loop-nest IR: what the analyzer produces and every later stage reads.
 *
 * A program (sp_program) holds the nests found in the input files. A nest is a tree of loops
 * (numbered 0..nloops-1 in source pre-order, loop 0 is the outermost) plus the arrays it touches
 * and its memory references in program order. Every bound and byte offset is an affine function
 * of the nest's loop indices (sp_affine); run-time parameters, macros and constants are already
 * folded into the numbers. */
#ifndef SCHEDPREDICT_IR_H
#define SCHEDPREDICT_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define SP_IR_SCHEMA_VERSION 1
/* Loops per nest, counting the parallel band and the sequential loops in the body. */
#define SP_MAX_LOOPS 16

typedef struct sp_srcloc {
  const char *file; /* owned by the program's string pool */
  unsigned line, col;
} sp_srcloc;

/* constant + sum_k coef[k] * (index of loop k) */
typedef struct sp_affine {
  int64_t constant;
  int64_t coef[SP_MAX_LOOPS];
} sp_affine;

/* The user's clauses on a loop (OpenACC, or the OpenMP equivalent). */
enum {
  SP_CL_GANG = 1u << 0,
  SP_CL_WORKER = 1u << 1,
  SP_CL_VECTOR = 1u << 2,
  SP_CL_SEQ = 1u << 3,
  SP_CL_INDEPENDENT = 1u << 4,
  SP_CL_AUTO = 1u << 5,
};

typedef struct sp_clauses {
  unsigned flags;
  /* arguments: 0 = not given, -1 = given but not a constant the analyzer could fold */
  int64_t gang_arg, worker_arg, vector_arg; /* gang(n) worker(n) vector(n) on the loop */
  int64_t num_gangs, num_workers, vector_length; /* from the compute construct */
  int collapse;                                  /* 0 = not given */
  int ntile;
  int64_t tile[SP_MAX_LOOPS];
  char *reduction; /* clause text, e.g. "+:sum" (repeated clauses joined: "+:a; max:b"), or NULL */
  char *private_vars; /* list, repeated clauses joined by ", " */
  char *directive; /* the whole pragma text as written, NULL if the loop has none */
  sp_srcloc directive_loc;
} sp_clauses;

typedef enum sp_parallel_reason {
  SP_PAR_DECLARED,       /* loop directive / independent / gang-worker-vector / omp for */
  SP_PAR_DECLARED_SEQ,   /* seq clause */
  SP_PAR_DEFAULT_SEQ,    /* no directive inside a parallel construct: runs sequentially */
  SP_PAR_TEST_PROVED,    /* dependence test proved the loop carries no dependence */
  SP_PAR_TEST_DEPENDENT, /* dependence test found (or could not exclude) a carried dependence */
} sp_parallel_reason;

/* Floating-point work the body of a loop does per iteration (analyzer/arith.c): operations by
 * precision and kind as the GPU executes them. An add or subtract with a multiply operand is one
 * fused multiply-add; a multiply, add, subtract, compare, fabs, fmin or fma counts as SIMPLE;
 * `/` as DIV; sqrt as SQRT; exp, log, sin, pow and the like as SPECIAL (pow as two). */
typedef enum sp_fp_kind {
  SP_FP64_SIMPLE,
  SP_FP64_DIV,
  SP_FP64_SQRT,
  SP_FP64_SPECIAL,
  SP_FP32_SIMPLE,
  SP_FP32_DIV,
  SP_FP32_SQRT,
  SP_FP32_SPECIAL,
  SP_FP_KINDS
} sp_fp_kind;

const char *sp_fp_kind_name(sp_fp_kind k);

/* ops: all the loop body's operations (those of nested loops belong to them; both branches of an
 * if count, as a warp whose lanes diverge runs both); chain: the operations on the longest chain
 * of dependent ones within one iteration, through the body's scalar variables (loads start
 * chains, a value carried from the previous iteration starts one too). */
typedef struct sp_fp_work {
  double ops[SP_FP_KINDS];
  double chain[SP_FP_KINDS];
} sp_fp_work;

typedef struct sp_loop {
  char *index;
  int parent;  /* loop id of the enclosing loop in this nest, -1 for loop 0 */
  int depth;   /* 0 for loop 0 */
  bool band;   /* perfectly nested chain from loop 0 down (mappable to the grid as a band) */
  /* in the band, though its parent's body has statements around it (analyzer/imperfect.c): thread
   * dimensions only, no collapse with or interchange across it */
  bool imperfect;
  /* The index takes lower, lower+step, ... while (step > 0 ? i <= upper : i >= upper):
   * upper is the inclusive last bound whatever comparison the source used. */
  sp_affine lower, upper;
  int64_t step;
  char *lower_text, *upper_text; /* the source expressions, for reports */
  int64_t trip_min, trip_max;    /* over all values of the outer indices */
  bool parallel;
  sp_parallel_reason parallel_reason;
  char *dependence; /* why not parallel (or why the declared parallel loop is suspect), or NULL */
  sp_clauses clauses;
  int collapsed_into; /* loop id whose collapse/tile clause covers this loop, or -1 */
  sp_fp_work fp;      /* floating-point work of one iteration of its body */
  sp_srcloc loc;
} sp_loop;

typedef struct sp_array {
  char *name;      /* variable name, or an access path such as "s->data" */
  char *elem_type; /* element type as written, e.g. "double", "struct point" */
  int64_t elem_size;
  int ndims;
  int64_t dims[SP_MAX_LOOPS]; /* extents, outermost first; -1 where unknown (pointer) */
  int64_t total_bytes;        /* declared size, or the accessed extent when undeclared */
  bool size_from_access;      /* total_bytes is the accessed extent (no declared size) */
  bool is_pointer;            /* base address unknown: assumed a fresh 256-byte-aligned buffer */
  sp_srcloc decl_loc;
} sp_array;

typedef enum sp_cmp { SP_CMP_GE0, SP_CMP_EQ0, SP_CMP_NE0 } sp_cmp;

/* An affine guard on a reference: expr >= 0, == 0 or != 0; or, with a modulus (> 0), a parity
 * guard `expr % modulus == remainder` (EQ0) or `!=` (NE0), the remainder as C computes it
 * (red-black sweeps' (i + j) % 2 == color). A reference's guards are a conjunction, except those
 * of a negated group (negated_group k > 0, contiguous in the list): the else branch of
 * `if (a && b)`, which runs unless every guard of group k holds. */
typedef struct sp_guard {
  sp_affine expr;
  sp_cmp cmp;
  int negated_group; /* 0: the guard must hold; k > 0: a member of negated group k */
  int64_t modulus;   /* 0: a plain guard */
  int64_t remainder; /* with a modulus: in (-modulus, modulus) */
} sp_guard;

/* The value a guard compares with 0 where its expression is x. */
static inline int64_t sp_guard_value(int64_t modulus, int64_t remainder, int64_t x) {
  return modulus > 0 ? x % modulus - remainder : x;
}

typedef enum sp_access { SP_READ, SP_WRITE } sp_access;

#define SP_REF_LOOPS_KNOWN (UINT32_C(1) << 31)

typedef struct sp_ref {
  int array;
  sp_access access;
  bool compound;       /* half of a read-modify-write (+=, ++) */
  bool irregular;      /* offset not affine: `offset` holds the affine part only */
  char *irregular_why; /* e.g. "indirect subscript x[col[j]]" */
  /* irregular: the loops (bit k: loop k) whose indices the access's value depends on, with
   * SP_REF_LOOPS_KNOWN set; 0 (a nest built without it): every loop. Lanes that agree on them
   * read the same element (x[col[i]] under a vector loop j). */
  uint32_t irregular_loops;
  /* irregular through loaded subscript terms alone: the bytes one unit of their values moves
   * the address (the gcd over the terms: 8 for x[col[i] + j], 2048 for a[perm[i]][j] of 256
   * doubles a row); 0 where unknown. Where a loaded value lands within a line follows from it. */
  int64_t irregular_scale;
  sp_affine offset;    /* byte offset from the array's base */
  int64_t size;        /* bytes accessed */
  int nloops;          /* enclosing loops of the nest, outermost first */
  int loops[SP_MAX_LOOPS];
  int nguards;
  sp_guard *guards;
  double guard_excluded; /* share of its loops' iterations that its guards exclude (0: none) */
  char *text; /* the access as written, e.g. "A[i][k]" */
  sp_srcloc loc;
} sp_ref;

/* Whether an irregular reference's value depends on loop k (sp_ref.irregular_loops; 0: every
 * loop). */
static inline bool sp_ref_irregular_uses(const sp_ref *r, int k) {
  return !r->irregular_loops || (r->irregular_loops >> k & 1);
}

typedef enum sp_construct {
  SP_CONSTRUCT_ACC_PARALLEL,
  SP_CONSTRUCT_ACC_KERNELS,
  SP_CONSTRUCT_ACC_SERIAL,
  SP_CONSTRUCT_OMP_TARGET,
  SP_CONSTRUCT_NONE, /* --all-loops: an unannotated nest */
} sp_construct;

typedef struct sp_note {
  sp_srcloc loc;
  char *message;
} sp_note;

/* What code generation (validation/) needs beyond the model: the band's body as written and the
 * variables it takes from outside. Not part of the IR JSON. */
typedef enum sp_cg_kind {
  SP_CG_SCALAR,    /* read only: a kernel parameter by value */
  SP_CG_PRIVATE,   /* written in the body: a local of each iteration */
  SP_CG_REDUCTION, /* named in a reduction clause of the construct or a band loop */
  SP_CG_ARRAY,     /* array or pointer: a kernel parameter T* cast to the declared shape */
} sp_cg_kind;

typedef struct sp_cg_var {
  char *name;
  sp_cg_kind kind;
  char *type;       /* C type of a scalar, or of an array's element, without qualifiers */
  char *shape;      /* arrays: the declarator suffix of the cast, e.g. "[4096]" for (*a)[4096];
                       private arrays (named in a private clause): all extents, "[3]" */
  int array;        /* arrays: index into the nest's arrays, -1 if the model has none (used
                       only through pointers derived from it in the body) */
  int64_t elem_size;   /* size of a scalar, or of an array's element */
  int64_t bytes;       /* arrays: the bytes to allocate (declared size, accessed extent, or a
                          data clause section where that is larger) */
  bool floating;    /* the (element) type is float or double */
  bool is_integer;  /* the (element) type is an integer (or enum) */
  bool value_known; /* scalars: value from --param, a const or a literal initializer */
  double value;     /* scalars (and privates read before written): the value to pass */
  bool read_first;  /* privates: read before written in the body (starts at `value`) */
  char op[4];       /* reductions: "+", "*", "max" or "min" */
  int64_t index_bound; /* integer arrays used directly as a subscript: elements of the array
                          they index (0 = not used so) */
} sp_cg_var;

typedef struct sp_codegen {
  char *body;                      /* the statement under the last band loop, as written, with
                                      #pragma acc / omp lines removed */
  char *index_type[SP_MAX_LOOPS];  /* band loops: the index's C type */
  char cmp[SP_MAX_LOOPS][3];       /* band loops: "<", "<=", ">", ">=" (index on the left) */
  int nvars;
  sp_cg_var *vars;
  char *prelude;       /* macro definitions in effect and file-scope type definitions */
  char *not_generated; /* why no kernel can be generated, or NULL */
  sp_srcloc not_generated_loc;
} sp_codegen;

typedef struct sp_nest {
  char *function;
  sp_construct construct;
  sp_clauses construct_clauses; /* num_gangs/num_workers/vector_length of the compute construct */
  bool construct_sole_loop; /* the construct holds this nest's outer loop and nothing else (GCC
                               parallelizes a kernels region only then: traces/schedule.c) */
  int nloops;
  sp_loop loops[SP_MAX_LOOPS];
  int narrays;
  sp_array *arrays;
  int nrefs;
  sp_ref *refs;
  int nnotes; /* how the analyzer treated what it could not model exactly */
  sp_note *notes;
  double band_iterations; /* iterations of the band (the parallel iteration space) */
  bool band_iterations_exact;
  sp_srcloc loc;
  sp_codegen *codegen; /* NULL when not collected */
} sp_nest;

typedef struct sp_program {
  int nnests;
  sp_nest *nests;
  int nfiles;
  char **files;
  struct sp_strpool *pool; /* file names referenced by sp_srcloc */
} sp_program;

/* Affine helpers. */
void sp_affine_zero(sp_affine *a);
sp_affine sp_affine_const(int64_t c);
bool sp_affine_is_const(const sp_affine *a);
/* Each returns false on 64-bit overflow (the result is then unspecified). */
bool sp_affine_add(sp_affine *out, const sp_affine *a, const sp_affine *b);
bool sp_affine_sub(sp_affine *out, const sp_affine *a, const sp_affine *b);
bool sp_affine_scale(sp_affine *out, const sp_affine *a, int64_t k);
/* Value with loop k's index = vals[k] (vals has SP_MAX_LOOPS entries); false on overflow. */
bool sp_affine_eval(const sp_affine *a, const int64_t *vals, int64_t *out);
/* Writes e.g. "8192*i + 8*j + 16" using the loop names; returns bytes needed (snprintf style). */
int sp_affine_format(char *buf, size_t n, const sp_affine *a, const sp_nest *nest);

/* Whether a loop's bounds are constants (no outer index in them). */
bool sp_loop_bounds_const(const sp_loop *l);
/* Whether every loop of the nest has constant bounds and one trip count: every iteration of a
 * loop runs the same inner iterations (no triangular loop). */
bool sp_nest_rectangular(const sp_nest *n);
/* The loops of the band: loops 0..k-1 are band loops (sp_loop.band), loop k is not. */
int sp_nest_band_length(const sp_nest *n);

void sp_program_free(sp_program *p);
const char *sp_construct_name(sp_construct c);
const char *sp_parallel_reason_name(sp_parallel_reason r);
/* Whether CUDA combines reduction v with a native atomicAdd: a sum of int, unsigned int,
 * unsigned long long, float or double (sm_60 on). Other reductions need a compare-and-swap
 * loop. The validation harness emits one and the time model costs the other by this. */
bool sp_cg_atomic_add_native(const sp_cg_var *v);

#endif

/* analyzer/ir_print.c: the IR as versioned JSON (malloc'd string, NULL on allocation failure),
 * and a short human summary. */
char *sp_ir_to_json(const sp_program *p);
void sp_ir_print_summary(FILE *out, const sp_program *p);
