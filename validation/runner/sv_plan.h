/* schedvalidate: the plan (validation/FORMATS.md) as the runner reads it. No CUDA here. */
#ifndef SV_PLAN_H
#define SV_PLAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a value of a C type is stored: the kernel receives it with this size. */
typedef enum { SV_NUM_FLOAT, SV_NUM_SIGNED, SV_NUM_UNSIGNED } sv_num_kind;
typedef struct {
  sv_num_kind kind;
  int size; /* bytes: 1, 2, 4 or 8 */
} sv_ctype;

typedef enum { SV_INIT_FLOAT, SV_INIT_INT, SV_INIT_BYTES } sv_init_kind;
typedef enum { SV_OP_ADD, SV_OP_MUL, SV_OP_MAX, SV_OP_MIN } sv_red_op;
typedef enum { SV_PARAM_ARRAY, SV_PARAM_SCALAR, SV_PARAM_REDUCTION } sv_param_kind;

typedef struct {
  char *name, *elem_type;
  int elem_size;
  sv_ctype type; /* meaningful for float and int init */
  int64_t bytes;
  sv_init_kind init;
  int64_t index_bound;
  bool written;
} sv_array;

typedef struct {
  char *name;
  sv_ctype type;
  unsigned char value[8]; /* the argument's bytes, little-endian as the device reads them */
} sv_scalar;

typedef struct {
  char *name;
  sv_ctype type;
  sv_red_op op;
} sv_reduction;

typedef struct {
  sv_param_kind kind;
  int index; /* into arrays, scalars or reductions */
} sv_param;

typedef struct {
  int64_t id;
  int64_t model_rank;
  char *kernel_name, *source, *pattern;
  unsigned block[3], grid[3];
} sv_candidate;

typedef struct {
  char *id, *prelude;
  sv_array *arrays;
  size_t n_arrays;
  sv_scalar *scalars;
  size_t n_scalars;
  sv_reduction *reductions;
  size_t n_reductions;
  sv_param *params;
  size_t n_params;
  sv_candidate *cands;
  size_t n_cands;
  size_t reference; /* index into cands */
} sv_kernel;

typedef struct {
  char *path;
  sv_kernel *kernels;
  size_t n_kernels;
} sv_plan;

/* Reads and checks a plan. On error returns -1 with a message naming the file and the JSON path
   of the problem (or file:line:col for a syntax error) in err. */
int sv_plan_load(const char *path, sv_plan *plan, char *err, size_t errlen);
/* Same, from text in memory; name is used in messages. */
int sv_plan_parse(const char *text, size_t len, const char *name, sv_plan *plan, char *err,
                  size_t errlen);
void sv_plan_free(sv_plan *plan);

/* The C type named by a plan's "elem_type"/"type" ("double", "unsigned int", "int64_t", ...);
   -1 when it is not a scalar type the runner knows. */
int sv_ctype_parse(const char *name, sv_ctype *out);
/* Bytes of the identity of op for type t (what a reduction starts at). */
void sv_red_identity(sv_red_op op, sv_ctype t, unsigned char out[8]);
/* Value of the e-th element of array number p (FORMATS.md), as the bytes of one element of a.
   For SV_INIT_BYTES, e counts bytes and one byte is written. */
void sv_init_value(const sv_array *a, int p, uint64_t e, unsigned char *out);
#endif
