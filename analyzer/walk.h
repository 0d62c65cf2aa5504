/* The analyzer's libclang-facing state, shared by analyzer.c, values.c and extract.c. */
#ifndef SP_ANALYZER_WALK_H
#define SP_ANALYZER_WALK_H

#include <clang-c/Index.h>

#include "analyzer/internal.h"

typedef struct sp_macro {
  char *name;
  int64_t value;
} sp_macro;

typedef struct sp_pragma_macro {
  char *name, *text;
} sp_pragma_macro;

typedef struct sp_host_loop {
  CXCursor var;
  bool known;
  int64_t first; /* first value of its index */
  unsigned line, col;
} sp_host_loop;

/* One translation unit being analyzed. */
typedef struct sp_az {
  CXTranslationUnit tu;
  CXFile file;
  const char *filename; /* interned in the program's pool */
  const char *contents;
  size_t contents_len;
  const sp_analyzer_options *opt;
  sp_diag *diag;
  sp_program *prog;
  sp_directive *dirs;
  int ndirs;
  int *dir_target; /* per directive: index into stmts, or -1 */
  bool *dir_used;
  CXCursor *stmts;
  unsigned *stmt_begin;
  int nstmts, cap_stmts;
  sp_macro *macros;
  int nmacros;
  /* object-like macros whose body is _Pragma("text") (text: NULL for function-like macros that
   * hold a _Pragma, whose uses are only warned about) */
  sp_pragma_macro *pragma_macros;
  int npragma_macros;
  sp_host_loop host[SP_MAX_LOOPS];
  int nhost;
  int status; /* worst exit code so far */
  int *nests_skipped; /* counts the nests found but skipped as not modelable */
  const char *function; /* the function being walked */
  unsigned function_begin; /* its file offset (data directives before a nest: sp_clause_extents) */
  char *prelude;        /* sp_codegen_prelude of this file */
  CXIndex index;        /* and the parser arguments: probe.c parses variants of the file */
  const char *const *args;
  int nargs;
} sp_az;

typedef struct sp_scalar_event {
  CXCursor decl;
  char *name;
  bool write, read; /* a compound update is both */
  unsigned loopmask; /* loops enclosing the event */
  unsigned line, col;
} sp_scalar_event;

typedef struct sp_local_value {
  CXCursor decl;
  sp_affine value;
  bool valid;
  bool pointer;     /* a pointer: its accesses are its initializer's (`init`) */
  bool followed;    /* the IR notes that it was followed, once */
  bool assigned;    /* assigned after its initialization (sp_local_assigned) */
  CXCursor init;    /* its initializer */
  char name[64];
  char why[512]; /* why the value is not affine */
} sp_local_value;

/* A parameter of an inlined index helper and its argument's value (values.c, sp_call_affine). */
typedef struct sp_bound_parm {
  CXCursor parm;
  sp_affine value;
} sp_bound_parm;

/* The `c ? x : y` initializer of a local whose value it leaves unknown (and that was never
 * assigned again), which an access's address may take either way (extract.c,
 * sp_access_lvalue); a null cursor otherwise. */
CXCursor sp_local_choice(const sp_local_value *lv);

/* One nest being built. */
typedef struct sp_nb {
  sp_az *az;
  sp_nest *nest;
  CXCursor loopvar[SP_MAX_LOOPS];
  unsigned loop_begin[SP_MAX_LOOPS], loop_end[SP_MAX_LOOPS];
  bool loop_sole_child[SP_MAX_LOOPS]; /* the loop is the only statement of its parent's body */
  CXCursor loop_body[SP_MAX_LOOPS];   /* the statement a loop repeats (code generation) */
  char loop_cmp[SP_MAX_LOOPS][3];     /* its comparison, index on the left */
  int collapse_left;                  /* loops still covered by an outer collapse/tile clause */
  int collapse_owner;
  unsigned decl_offset_scratch;
  unsigned top_begin, top_end;
  int stack[SP_MAX_LOOPS];
  int nstack;
  sp_guard guards[32];
  int nguards;
  int negated_groups; /* negated guard groups numbered so far (sp_guard.negated_group) */
  CXCursor *array_decl; /* parallel to nest->arrays; null cursor for access-path roots */
  int cap_arrays, cap_refs, cap_notes;
  sp_scalar_event *events;
  int nevents, cap_events;
  sp_local_value *locals;
  int nlocals, cap_locals;
  bool skip;        /* the nest cannot be modeled: dropped with a message */
  bool value_error; /* a value is missing or an offset overflows */
  int resolving;    /* >0 while a local pointer's initializer is re-read at a use: its
                       loads were counted at the declaration */
  int depth_guard;  /* recursion depth of the expression walker */
  int switch_depth; /* switch statements around the statement walked, inside its loop */
  sp_bound_parm bound[32]; /* the parameters of the helper calls being read, innermost last */
  int nbound;
  /* while an access is recorded under one branch of a `c ? x : y` its address takes (extract.c,
   * sp_access_lvalue): that operator, and the branch (0: x, 1: y); null cursor otherwise */
  CXCursor forced_choice;
  int forced_branch;
} sp_nb;

/* arith.c: each loop's floating-point work (sp_loop.fp) from its body, loop_body[l] */
void sp_arith_count(sp_az *az, sp_nest *nest, const CXCursor *loop_body);

/* values.c */
typedef enum sp_aff_status {
  SP_AFF_OK,
  SP_AFF_NONAFFINE,
  SP_AFF_UNKNOWN, /* needs a value nobody gave: the variable is in `unknown` */
  SP_AFF_OVERFLOW,
} sp_aff_status;

typedef struct sp_aff_err {
  char why[512];
  CXCursor unknown; /* the declaration lacking a value */
  CXCursor at;      /* where it is used */
} sp_aff_err;

CXCursor sp_strip(CXCursor c);
int sp_children(CXCursor c, CXCursor *out, int max);
/* The operator token of a binary / compound-assignment / unary operator ("" if unreadable). */
void sp_operator(sp_az *az, CXCursor c, char *op, size_t n);
void sp_cursor_loc(CXCursor c, unsigned *line, unsigned *col, unsigned *offset);
void sp_cursor_range(CXCursor c, unsigned *begin, unsigned *end);
/* The source text of the cursor, whitespace folded (malloc'd). */
char *sp_cursor_text(sp_az *az, CXCursor c);
/* The word the file spells at offset off, after blanks, where it is not `for` (a macro that makes
 * a loop, FOR(i, n)): its start in *word and its length; 0 where the file says `for` there or
 * has no word. */
size_t sp_word_instead_of_for(const sp_az *az, size_t off, const char **word);
bool sp_cursor_is_null(CXCursor c);
/* Affine form of an integer expression in the nest's loop indices (nb may be NULL: constants). */
sp_aff_status sp_expr_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out, sp_aff_err *err);
/* Reports a SP_AFF_UNKNOWN / SP_AFF_OVERFLOW error in the user's terms. */
void sp_report_value_error(sp_az *az, sp_aff_status st, const sp_aff_err *err, const char *what);
bool sp_lookup_param(sp_az *az, const char *name, int64_t *value);

/* probe.c: the affine form of an integer expression whose operators libclang 14 cannot show
 * (they are spelled in a macro body), by evaluating it at chosen loop indices. */
sp_aff_status sp_probe_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out);

/* extract.c */
void sp_nb_note(sp_nb *nb, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sp_nb_skip(sp_nb *nb, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The local declared in the nest that `decl` is, or NULL. */
sp_local_value *sp_nb_local(sp_nb *nb, CXCursor decl);
/* A note in the IR only, at the nest (no diagnostic: for what the model does routinely). */
void sp_nb_note_quiet(sp_nb *nb, const char *msg);

/* repeat.c: drops the loads whose value a compiler reuses from an earlier load or store */
void sp_nb_drop_repeated_loads(sp_nb *nb);
/* imperfect.c: the loop alone in a band loop's body among other statements joins the band */
void sp_nb_sink_imperfect(sp_nb *nb);
/* The index variable of a for loop and the expression of its first value; false if the loop
 * does not start with `i = start` / `int i = start`. */
bool sp_for_index(sp_az *az, CXCursor f, CXCursor *var, CXCursor *first);
/* Walks loop `f` (a ForStmt) into the nest, as a child of `parent` (-1 for the top). */
void sp_nb_walk_loop(sp_nb *nb, CXCursor f, int parent, bool sole_child);
void sp_nb_free(sp_nb *nb);
/* Directives attached to a statement (indices into az->dirs), in source order. */
int sp_directives_of(sp_az *az, CXCursor stmt, int *out, int max);
/* codegen.c: what validation/ needs to generate the band as CUDA (nest->codegen). */
void sp_codegen_collect(sp_nb *nb, CXCursor top);
/* Elements of array `name` by a section name[lo:len][lo:len]... of a data clause in a directive's
 * text: the product over dimensions of lo + len, the bounds evaluated as C with the file's macros
 * and the --param values; -1 when the directive has no such section. */
int64_t sp_section_elements(sp_az *az, const char *directive, const char *name);
/* Each dimension's lo + len of that section into ext (at most max); how many dimensions, or -1
 * when there is no such section or one does not evaluate. */
int sp_section_extents(sp_az *az, const char *directive, const char *name, int64_t *ext, int max);
/* The -D definitions of the parser arguments as #define lines (malloc'd). */
char *sp_codegen_defines(char *const *args, int nargs);
/* Those, then the file's macro definitions in effect and its file-scope type definitions. */
char *sp_codegen_prelude(sp_az *az, const char *defines);
/* Array extents over the loops' index ranges lo..hi (sp_loop_ranges; lo NULL: they overflowed, an
 * error); false (after an error naming the reference) if an offset leaves 64 bits. */
bool sp_nb_finish_arrays(sp_nb *nb, const int64_t *lo, const int64_t *hi);

#endif
