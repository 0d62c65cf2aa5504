/* Walks one loop nest's statements in program order: loops, memory references, guards, and the
 * scalar updates the dependence test needs. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

#define SP_GROW(ptr, n, cap)                                                   \
  ((n) < (cap) ? true                                                          \
               : ((cap) = (cap) ? (cap) * 2 : 8,                               \
                  sp_grow_raw((void **)&(ptr), (size_t)(cap), sizeof *(ptr))))

static bool sp_grow_raw(void **p, size_t n, size_t size) {
  void *q = realloc(*p, n * size);
  if (!q) return false;
  *p = q;
  return true;
}

static void sp_nb_vnote(sp_nb *nb, CXCursor at, sp_severity sev, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  unsigned line = 0, col = 0;
  if (!clang_Cursor_isNull(at)) sp_cursor_loc(at, &line, &col, NULL);
  sp_nest *n = nb->nest;
  for (int i = 0; i < n->nnotes; i++) /* the same treatment at the same place once */
    if (n->notes[i].loc.line == line && n->notes[i].loc.col == col &&
        strcmp(n->notes[i].message, msg) == 0)
      return;
  sp_diag_report(nb->az->diag, sev, nb->az->filename, line, col, "%s", msg);
  if (!SP_GROW(n->notes, n->nnotes, nb->cap_notes)) return;
  n->notes[n->nnotes].loc = (sp_srcloc){nb->az->filename, line, col};
  n->notes[n->nnotes].message = strdup(msg);
  n->nnotes++;
}

void sp_nb_note_quiet(sp_nb *nb, const char *msg) {
  sp_nest *n = nb->nest;
  if (!SP_GROW(n->notes, n->nnotes, nb->cap_notes)) return;
  n->notes[n->nnotes].loc = n->loc;
  n->notes[n->nnotes].message = strdup(msg);
  n->nnotes++;
}

void sp_nb_note(sp_nb *nb, CXCursor at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sp_nb_vnote(nb, at, SP_NOTE, fmt, ap);
  va_end(ap);
}

static void sp_nb_warn(sp_nb *nb, CXCursor at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sp_nb_warn(sp_nb *nb, CXCursor at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sp_nb_vnote(nb, at, SP_WARNING, fmt, ap);
  va_end(ap);
}

void sp_nb_skip(sp_nb *nb, CXCursor at, const char *fmt, ...) {
  if (nb->skip) return;
  va_list ap;
  va_start(ap, fmt);
  sp_nb_vnote(nb, at, SP_WARNING, fmt, ap);
  va_end(ap);
  nb->skip = true;
}

void sp_nb_free(sp_nb *nb) {
  free(nb->array_decl);
  for (int i = 0; i < nb->nevents; i++) free(nb->events[i].name);
  free(nb->events);
  free(nb->locals);
}

static bool sp_value_ok(sp_nb *nb, sp_aff_status st, const sp_aff_err *err, const char *what) {
  if (st == SP_AFF_OK) return true;
  if (st == SP_AFF_UNKNOWN || st == SP_AFF_OVERFLOW) {
    sp_report_value_error(nb->az, st, err, what);
    nb->value_error = true;
  }
  return false;
}

static unsigned sp_stack_mask(const sp_nb *nb) {
  unsigned m = 0;
  for (int i = 0; i < nb->nstack; i++) m |= 1u << nb->stack[i];
  return m;
}

/* ---- arrays ---------------------------------------------------------------------------------- */

static bool sp_is_array_type(CXType t) {
  return t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray ||
         t.kind == CXType_VariableArray || t.kind == CXType_DependentSizedArray;
}

static bool sp_is_pointerish(CXType t) {
  t = clang_getCanonicalType(t);
  return t.kind == CXType_Pointer || sp_is_array_type(t);
}

static char *sp_type_name(CXType t) {
  CXString s = clang_getTypeSpelling(t);
  const char *c = clang_getCString(s);
  static const char *const quals[] = {"const ", "volatile ", "restrict ", "__restrict "};
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < sizeof quals / sizeof *quals; i++)
      if (strncmp(c, quals[i], strlen(quals[i])) == 0) {
        c += strlen(quals[i]);
        again = true;
      }
  }
  char *r = strdup(c);
  clang_disposeString(s);
  return r;
}

/* Declared dimensions of a variable; VLA extents come from the size expressions that libclang
 * lists as the declaration's children, innermost first. */
static void sp_array_shape(sp_nb *nb, CXCursor decl, sp_array *a) {
  CXType t = clang_getCursorType(decl);
  CXCursor kids[SP_MAX_LOOPS + 4];
  int nk = sp_children(decl, kids, SP_MAX_LOOPS + 4);
  if (nk > SP_MAX_LOOPS + 4) nk = SP_MAX_LOOPS + 4;
  CXCursor sizes[SP_MAX_LOOPS];
  int nsizes = 0;
  for (int i = nk - 1; i >= 0 && nsizes < SP_MAX_LOOPS; i--)
    if (clang_isExpression(clang_getCursorKind(kids[i]))) sizes[nsizes++] = kids[i];
  a->ndims = 0;
  if (clang_getCanonicalType(t).kind == CXType_Pointer) {
    a->dims[a->ndims++] = -1;
    t = clang_getPointeeType(clang_getCanonicalType(t));
  }
  /* sizes[] holds one size expression per written array level, outermost first (a variable
   * with an initializer has it last among its children, so first here: skip it, a brace list or
   * any expression, such as the cast of `double (*a)[m] = (double (*)[m])p`) */
  CXCursor init = clang_getCursorKind(decl) == CXCursor_VarDecl
                      ? clang_Cursor_getVarDeclInitializer(decl) : clang_getNullCursor();
  int level = 0,
      first_size = nsizes > 0 && (clang_getCursorKind(sizes[0]) == CXCursor_InitListExpr ||
                                  (!clang_Cursor_isNull(init) &&
                                   clang_equalCursors(sp_strip(init), sp_strip(sizes[0]))));
  while (sp_is_array_type(t) && a->ndims < SP_MAX_LOOPS) {
    int64_t d = -1;
    if (t.kind == CXType_ConstantArray) {
      d = clang_getArraySize(t);
    } else if (t.kind == CXType_VariableArray && first_size + level < nsizes) {
      sp_affine v;
      sp_aff_err err;
      memset(&err, 0, sizeof err);
      sp_aff_status st = sp_expr_affine(nb->az, NULL, sizes[first_size + level], &v, &err);
      if (st == SP_AFF_OK && sp_affine_is_const(&v)) d = v.constant;
      else sp_value_ok(nb, st, &err, "the array dimension");
    }
    a->dims[a->ndims++] = d;
    level++;
    t = clang_getArrayElementType(t);
  }
  if (a->ndims == 0) a->dims[a->ndims++] = -1;
  a->elem_size = clang_Type_getSizeOf(t);
  a->elem_type = sp_type_name(t);
}

static int sp_array_for_decl(sp_nb *nb, CXCursor decl, const char *path, CXCursor at) {
  sp_nest *n = nb->nest;
  for (int i = 0; i < n->narrays; i++) {
    if (path ? (clang_Cursor_isNull(nb->array_decl[i]) && strcmp(n->arrays[i].name, path) == 0)
             : clang_equalCursors(nb->array_decl[i], decl))
      return i;
  }
  if (!SP_GROW(n->arrays, n->narrays, nb->cap_arrays)) return -1;
  nb->array_decl = realloc(nb->array_decl, (size_t)nb->cap_arrays * sizeof *nb->array_decl);
  if (!nb->array_decl) return -1;
  sp_array *a = &n->arrays[n->narrays];
  memset(a, 0, sizeof *a);
  unsigned line, col;
  if (path) {
    nb->array_decl[n->narrays] = clang_getNullCursor();
    a->name = strdup(path);
    CXType t = clang_getCanonicalType(clang_getCursorType(at));
    CXType elem = t.kind == CXType_Pointer ? clang_getPointeeType(t) : clang_getArrayElementType(t);
    a->elem_type = sp_type_name(elem);
    a->elem_size = clang_Type_getSizeOf(elem);
    a->ndims = 1;
    a->dims[0] = -1;
    a->is_pointer = true;
    sp_cursor_loc(at, &line, &col, NULL);
  } else {
    nb->array_decl[n->narrays] = decl;
    CXString s = clang_getCursorSpelling(decl);
    a->name = strdup(clang_getCString(s));
    clang_disposeString(s);
    sp_array_shape(nb, decl, a);
    a->is_pointer = clang_getCursorKind(decl) == CXCursor_ParmDecl ||
                    clang_getCanonicalType(clang_getCursorType(decl)).kind == CXType_Pointer;
    sp_cursor_loc(decl, &line, &col, NULL);
  }
  if (a->elem_size <= 0) a->elem_size = 1;
  a->decl_loc = (sp_srcloc){nb->az->filename, line, col};
  return n->narrays++;
}

/* ---- addresses ------------------------------------------------------------------------------- */

typedef struct sp_addr {
  int array;
  int level; /* subscripts applied from the root so far (for VLA strides) */
  sp_affine offset;
  bool irregular;
  /* irregular through subscripts alone (irregular_other false): the loops those subscripts'
   * non-affine parts read, the affine rest being in offset */
  bool irregular_other;
  uint32_t irregular_loops;
  int64_t irregular_scale; /* (sp_ref's) */
  char why[200];
} sp_addr;

static void sp_walk_expr(sp_nb *nb, CXCursor e);
static bool sp_lvalue_addr(sp_nb *nb, CXCursor e, sp_addr *a);

static uint32_t sp_loops_used(sp_nb *nb, CXCursor e, int depth);

/* other: for a reason other than a subscript's value (see sp_addr) */
static void sp_mark_irregular_as(sp_addr *a, bool other, const char *fmt, const char *text) {
  a->irregular_other |= other;
  if (a->irregular) return;
  a->irregular = true;
  snprintf(a->why, sizeof a->why, fmt, text);
}

static void sp_mark_irregular(sp_addr *a, const char *fmt, const char *text) {
  sp_mark_irregular_as(a, true, fmt, text);
}

/* Bytes one step of subscript `level` moves, from the declared shape when sizeof cannot tell. */
static int64_t sp_stride(sp_nb *nb, const sp_addr *a, CXCursor subscript) {
  int64_t size = clang_Type_getSizeOf(clang_getCursorType(subscript));
  if (size > 0) return size;
  const sp_array *arr = &nb->nest->arrays[a->array];
  int64_t s = arr->elem_size;
  for (int d = a->level + 1; d < arr->ndims; d++) {
    if (arr->dims[d] < 0) return -1;
    if (__builtin_mul_overflow(s, arr->dims[d], &s)) return -1;
  }
  return s;
}

static void sp_add_scaled_value(sp_nb *nb, sp_addr *a, CXCursor idx, int64_t scale, CXCursor at);

/* A subscript's sum that is not affine as a whole, split into its terms (a term times a
 * constant scaled): col[i] * M + j keeps 8 * j in the offset and col[i] as the irregular part,
 * so that the lanes along j read a row where their col[i] is one, as a warp reads a gathered
 * row (validation/results/h200/2026-12-01-gather-rows-probe). False where idx is no such sum. */
static bool sp_split_sum(sp_nb *nb, sp_addr *a, CXCursor idx, int64_t scale, CXCursor at) {
  CXCursor s = sp_strip(idx), kids[2];
  if (clang_getCursorKind(s) != CXCursor_BinaryOperator || sp_children(s, kids, 2) != 2)
    return false;
  char op[8];
  sp_operator(nb->az, s, op, sizeof op);
  if (strcmp(op, "+") == 0 || strcmp(op, "-") == 0) {
    if (op[0] == '-' && scale == INT64_MIN) return false;
    sp_add_scaled_value(nb, a, kids[0], scale, at);
    sp_add_scaled_value(nb, a, kids[1], op[0] == '-' ? -scale : scale, at);
    return true;
  }
  if (strcmp(op, "*") != 0) return false;
  for (int k = 0; k < 2; k++) {
    sp_affine c;
    sp_aff_err err;
    memset(&err, 0, sizeof err);
    int64_t scaled;
    if (sp_expr_affine(nb->az, nb, kids[k], &c, &err) == SP_AFF_OK && sp_affine_is_const(&c) &&
        !__builtin_mul_overflow(scale, c.constant, &scaled)) {
      sp_add_scaled_value(nb, a, kids[1 - k], scaled, at);
      return true;
    }
  }
  return false;
}

static void sp_add_scaled(sp_nb *nb, sp_addr *a, CXCursor idx, int64_t scale, CXCursor at) {
  if (!nb->resolving) sp_walk_expr(nb, idx); /* the index's own loads come first */
  sp_add_scaled_value(nb, a, idx, scale, at);
}

static void sp_add_scaled_value(sp_nb *nb, sp_addr *a, CXCursor idx, int64_t scale, CXCursor at) {
  sp_affine v;
  sp_aff_err err;
  memset(&err, 0, sizeof err);
  sp_aff_status st = sp_expr_affine(nb->az, nb, idx, &v, &err);
  if (st == SP_AFF_NONAFFINE && strstr(err.why, "operator '?'") &&
      sp_probe_affine(nb->az, nb, idx, &v) == SP_AFF_OK)
    st = SP_AFF_OK; /* an operator in a macro body: evaluated instead */
  if (st == SP_AFF_OK && scale != 0 && sp_affine_scale(&v, &v, scale) &&
      sp_affine_add(&a->offset, &a->offset, &v))
    return;
  if (st == SP_AFF_UNKNOWN) {
    sp_value_ok(nb, st, &err, "the subscript");
    return;
  }
  if (st == SP_AFF_OK || st == SP_AFF_OVERFLOW) {
    err.at = at;
    snprintf(err.why, sizeof err.why, "byte offset of the access");
    sp_value_ok(nb, SP_AFF_OVERFLOW, &err, "the byte offset");
    return;
  }
  bool indirect = strstr(err.why, "memory") != NULL;
  if (indirect && sp_split_sum(nb, a, idx, scale, at)) return;
  char *text = sp_cursor_text(nb->az, idx);
  char *why = sp_xasprintf("%s subscript %s (%s)", indirect ? "indirect" : "non-affine",
                           text ? text : "?", err.why);
  sp_mark_irregular_as(a, !indirect, "%s", why ? why : "non-affine subscript");
  a->irregular_loops |= sp_loops_used(nb, idx, 0);
  a->irregular_scale = sp_gcd(a->irregular_scale, scale);
  free(why);
  free(text);
}

sp_local_value *sp_nb_local(sp_nb *nb, CXCursor decl) {
  for (int i = 0; i < nb->nlocals; i++)
    if (clang_equalCursors(nb->locals[i].decl, decl)) return &nb->locals[i];
  return NULL;
}

/* A local's value no longer holds where the walk goes next: it is assigned `where`. */
static void sp_local_assigned(sp_local_value *lv, const char *where) {
  if (lv) lv->assigned = true;
  if (!lv || !lv->valid) return;
  lv->valid = false;
  snprintf(lv->why, sizeof lv->why, "'%s' is assigned inside %s", lv->name, where);
}

/* The extents of array `name` (ext[d], each lo + len; the count returned, -1 where none is
 * found) from a section name[lo:len]... in a data clause: of the construct, of a loop of the
 * nest, else of the nearest data directive (acc data, enter data, update; omp target data)
 * before the nest in its function. A data region is not matched to its block: the function's
 * sections of one name are taken to give one shape. */
static int sp_clause_extents(sp_nb *nb, const char *name, int64_t *ext) {
  const sp_nest *n = nb->nest;
  sp_az *az = nb->az;
  int dims = sp_section_extents(az, n->construct_clauses.directive, name, ext, SP_MAX_LOOPS);
  for (int k = 0; k < n->nloops && dims < 0; k++)
    dims = sp_section_extents(az, n->loops[k].clauses.directive, name, ext, SP_MAX_LOOPS);
  for (int d = az->ndirs - 1; d >= 0 && dims < 0; d--) {
    const sp_directive *dir = &az->dirs[d];
    if (dir->kind == SP_DIR_OTHER && dir->begin_offset >= az->function_begin &&
        dir->begin_offset < nb->top_begin)
      dims = sp_section_extents(az, dir->clauses.directive, name, ext, SP_MAX_LOOPS);
  }
  return dims;
}

/* The row extent (elements) of the rows of `name`, a table of row pointers: the second
 * dimension of its data clause section, name[lo:n][lo:m] giving lo + m; -1 where none does. */
static int64_t sp_row_extent(sp_nb *nb, const char *name) {
  int64_t ext[SP_MAX_LOOPS];
  return sp_clause_extents(nb, name, ext) >= 2 ? ext[1] : -1;
}

/* A row pointer rows[s] (rows a variable or a structure's member, s affine) whose rows' extent m
 * a data clause gives (present(rows[0:n][0:m])): the rows are taken as one m-element row after
 * another, an array "rows[*]" at offset s * m elements. Their accesses are then coalesced within
 * a row as on the GPU; as an irregular access each lane was its own sector, 32 a warp where a row
 * of doubles takes 8. Rows allocated apart differ from this only in the lines at their ends
 * (validation/results/h200/2026-12-01-row-pointers-probe/). */
static bool sp_rows_addr(sp_nb *nb, CXCursor e, sp_addr *a) {
  CXCursor kids[2];
  if (sp_children(e, kids, 2) != 2) return false;
  const int b = sp_is_pointerish(clang_getCursorType(sp_strip(kids[0]))) ? 0 : 1;
  const CXCursor base = sp_strip(kids[b]);
  const enum CXCursorKind bk = clang_getCursorKind(base);
  char *name = NULL;
  if (bk == CXCursor_MemberRefExpr) { /* g->rows: named in the clause as written */
    name = sp_cursor_text(nb->az, base);
  } else if (bk == CXCursor_DeclRefExpr) {
    const CXCursor decl = clang_getCursorReferenced(base);
    const enum CXCursorKind dk = clang_getCursorKind(decl);
    if ((dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl) || sp_nb_local(nb, decl)) return false;
    CXString spelled = clang_getCursorSpelling(decl);
    name = strdup(clang_getCString(spelled));
    clang_disposeString(spelled);
  }
  const int64_t elem =
      clang_Type_getSizeOf(clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(e))));
  if (!name || elem <= 0) {
    free(name);
    return false;
  }
  const int64_t m = sp_row_extent(nb, name);
  sp_affine v;
  sp_aff_err err;
  memset(&err, 0, sizeof err);
  int64_t pitch;
  bool ok = m > 0 && !__builtin_mul_overflow(m, elem, &pitch) &&
            sp_expr_affine(nb->az, nb, kids[1 - b], &v, &err) == SP_AFF_OK &&
            sp_affine_scale(&v, &v, pitch);
  char *path = ok ? sp_xasprintf("%s[*]", name) : NULL;
  free(name);
  if (!path) return false;
  if (!nb->resolving) sp_walk_expr(nb, e); /* the row pointer itself is loaded */
  const int known = nb->nest->narrays;
  a->array = sp_array_for_decl(nb, clang_getNullCursor(), path, e);
  if (a->array >= known && a->array >= 0)
    sp_nb_note(nb, e, "the rows of '%.*s' are taken as %lld-element rows one after another "
               "(the data clause's extent), an array '%s'", (int)(strlen(path) - 3), path,
               (long long)m, path);
  free(path);
  a->offset = v;
  a->level = 0;
  return a->array >= 0;
}

static bool sp_pointer_addr(sp_nb *nb, CXCursor e, sp_addr *a) {
  e = sp_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  CXType t = clang_getCanonicalType(clang_getCursorType(e));
  if (k == CXCursor_CStyleCastExpr) {
    CXCursor kids[3];
    int n = sp_children(e, kids, 3);
    return n >= 1 && sp_pointer_addr(nb, kids[n > 3 ? 2 : n - 1], a);
  }
  if (k == CXCursor_DeclRefExpr) {
    CXCursor decl = clang_getCursorReferenced(e);
    enum CXCursorKind dk = clang_getCursorKind(decl);
    if (dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl) return false;
    sp_local_value *lv = sp_nb_local(nb, decl);
    if (lv && !lv->pointer) lv = NULL;
    if (lv && lv->valid && nb->depth_guard < 64) {
      nb->resolving++;
      nb->depth_guard++;
      bool ok = sp_pointer_addr(nb, lv->init, a);
      nb->depth_guard--;
      nb->resolving--;
      if (ok && !lv->followed) {
        lv->followed = true;
        char *text = sp_cursor_text(nb->az, lv->init);
        char *msg = sp_xasprintf("pointer '%s' is followed to its initialization '%s'",
                                 lv->name, text ? text : "?");
        if (msg) sp_nb_note_quiet(nb, msg);
        free(msg);
        free(text);
      }
      return ok;
    }
    a->array = sp_array_for_decl(nb, decl, NULL, e);
    a->level = 0;
    sp_affine_zero(&a->offset);
    if (lv && !lv->valid) sp_mark_irregular(a, "base pointer %.180s", lv->why);
    return a->array >= 0;
  }
  if (sp_is_array_type(t) && (k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr))
    return sp_lvalue_addr(nb, e, a);
  if (k == CXCursor_BinaryOperator) {
    char op[8];
    sp_operator(nb->az, e, op, sizeof op);
    CXCursor kids[2];
    if (sp_children(e, kids, 2) != 2 || (strcmp(op, "+") && strcmp(op, "-"))) goto opaque;
    int p = sp_is_pointerish(clang_getCursorType(kids[0])) ? 0 : 1;
    if (!sp_pointer_addr(nb, kids[p], a)) return false;
    int64_t elem = clang_Type_getSizeOf(clang_getPointeeType(t));
    if (elem <= 0) elem = 1;
    sp_add_scaled(nb, a, kids[1 - p], strcmp(op, "-") == 0 ? -elem : elem, e);
    return true;
  }
  if (k == CXCursor_UnaryOperator) { /* &A[i * n]: A + i * n, no load */
    CXCursor kid[1];
    char op[8];
    if (sp_children(e, kid, 1) == 1) {
      sp_operator(nb->az, e, op, sizeof op);
      if (strcmp(op, "&") == 0 && sp_lvalue_addr(nb, kid[0], a)) return true;
    }
  }
opaque:;
  if (k == CXCursor_ArraySubscriptExpr && sp_rows_addr(nb, e, a)) return true;
  /* A pointer loaded from memory (s->data, rows[i]) or computed: a root of its own. */
  char *text = sp_cursor_text(nb->az, e);
  if (k == CXCursor_ArraySubscriptExpr || k == CXCursor_UnaryOperator) {
    if (!nb->resolving) sp_walk_expr(nb, e); /* the pointer itself is loaded */
    char *path = sp_xasprintf("%s[*]", text ? text : "?");
    a->array = sp_array_for_decl(nb, clang_getNullCursor(), path ? path : "?", e);
    free(path);
    sp_affine_zero(&a->offset);
    sp_mark_irregular(a, "base pointer loaded from memory (%s)", text ? text : "?");
  } else {
    if (k == CXCursor_MemberRefExpr)
      sp_nb_note(nb, e, "pointer '%s' is read from a structure: assumed the same in every "
                 "iteration and not aliasing other arrays", text ? text : "?");
    else
      sp_nb_note(nb, e, "pointer expression '%s' treated as an array of its own",
                 text ? text : "?");
    a->array = sp_array_for_decl(nb, clang_getNullCursor(), text ? text : "?", e);
    sp_affine_zero(&a->offset);
  }
  a->level = 0;
  free(text);
  return a->array >= 0;
}

/* Address of an lvalue in memory; false for registers (scalars, local structs). */
static bool sp_lvalue_addr(sp_nb *nb, CXCursor e, sp_addr *a) {
  e = sp_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  CXCursor kids[2];
  if (k == CXCursor_ArraySubscriptExpr && sp_children(e, kids, 2) == 2) {
    int b = sp_is_pointerish(clang_getCursorType(sp_strip(kids[0]))) ? 0 : 1;
    if (!sp_pointer_addr(nb, kids[b], a)) {
      sp_walk_expr(nb, kids[1 - b]);
      return false;
    }
    int64_t stride = sp_stride(nb, a, e);
    if (stride <= 0) {
      sp_mark_irregular(a, "%s", "element size unknown");
      stride = 1;
    }
    sp_add_scaled(nb, a, kids[1 - b], stride, e);
    a->level++;
    return true;
  }
  if (k == CXCursor_MemberRefExpr && sp_children(e, kids, 1) == 1) {
    CXCursor field = clang_getCursorReferenced(e);
    long long bits = clang_Cursor_getOffsetOfField(field);
    bool arrow = clang_getCanonicalType(clang_getCursorType(sp_strip(kids[0]))).kind ==
                 CXType_Pointer;
    bool ok = arrow ? sp_pointer_addr(nb, kids[0], a) : sp_lvalue_addr(nb, kids[0], a);
    if (!ok) return false;
    if (bits < 0 || bits % 8) sp_mark_irregular(a, "%s", "bit-field or unknown field offset");
    else if (!sp_affine_add(&a->offset, &a->offset, &(sp_affine){.constant = bits / 8}))
      sp_mark_irregular(a, "%s", "offset overflow");
    return true;
  }
  if (k == CXCursor_UnaryOperator && sp_children(e, kids, 1) == 1) {
    char op[8];
    sp_operator(nb->az, e, op, sizeof op);
    if (strcmp(op, "*") == 0) return sp_pointer_addr(nb, kids[0], a);
  }
  return false;
}

/* ---- references ------------------------------------------------------------------------------ */

typedef struct sp_uses {
  sp_nb *nb;
  uint32_t loops;
  int depth;
} sp_uses;

static enum CXChildVisitResult sp_uses_visit(CXCursor c, CXCursor parent, CXClientData d);

/* The loops whose indices expression e's value depends on: its loop indices, and those of the
 * initializers of the locals it reads; every loop where a local is assigned after its
 * initialization, or a scalar from outside the nest (not a parameter) is read. */
static uint32_t sp_loops_used(sp_nb *nb, CXCursor e, int depth) {
  sp_uses u = {nb, 0, depth};
  sp_uses_visit(e, clang_getNullCursor(), &u);
  clang_visitChildren(e, sp_uses_visit, &u);
  return u.loops;
}

static enum CXChildVisitResult sp_uses_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  sp_uses *u = d;
  if (clang_getCursorKind(c) != CXCursor_DeclRefExpr) return CXChildVisit_Recurse;
  const CXCursor decl = clang_getCursorReferenced(c);
  for (int k = 0; k < u->nb->nest->nloops; k++)
    if (clang_equalCursors(u->nb->loopvar[k], decl)) {
      u->loops |= UINT32_C(1) << k;
      return CXChildVisit_Continue;
    }
  const sp_local_value *lv = sp_nb_local(u->nb, decl);
  if (!lv) {
    /* an array or pointer is a base; a scalar parameter is the same in every iteration; any
     * other scalar (declared outside the nest) may be assigned in it */
    const enum CXTypeKind tk = clang_getCanonicalType(clang_getCursorType(decl)).kind;
    if (tk != CXType_Pointer && !sp_is_array_type(clang_getCursorType(decl)) &&
        clang_getCursorKind(decl) != CXCursor_ParmDecl)
      u->loops = UINT32_MAX;
    return CXChildVisit_Continue;
  }
  if (lv->assigned || clang_Cursor_isNull(lv->init) || u->depth >= 16) u->loops = UINT32_MAX;
  else u->loops |= sp_loops_used(u->nb, lv->init, u->depth + 1);
  return CXChildVisit_Continue;
}

static void sp_emit_ref(sp_nb *nb, CXCursor e, const sp_addr *a, sp_access acc, bool compound) {
  sp_nest *n = nb->nest;
  if (!SP_GROW(n->refs, n->nrefs, nb->cap_refs)) return;
  sp_ref *r = &n->refs[n->nrefs];
  memset(r, 0, sizeof *r);
  r->array = a->array;
  r->access = acc;
  r->compound = compound;
  r->irregular = a->irregular;
  r->irregular_why = a->irregular ? strdup(a->why) : NULL;
  if (a->irregular) {
    r->irregular_loops = (a->irregular_other ? sp_loops_used(nb, e, 0) : a->irregular_loops) |
                         SP_REF_LOOPS_KNOWN;
    r->irregular_scale = a->irregular_other ? 0 : a->irregular_scale;
  }
  r->offset = a->offset;
  r->size = clang_Type_getSizeOf(clang_getCursorType(e));
  if (r->size <= 0) r->size = n->arrays[a->array].elem_size;
  r->nloops = nb->nstack;
  memcpy(r->loops, nb->stack, sizeof r->loops);
  if (nb->nguards) {
    r->guards = malloc((size_t)nb->nguards * sizeof *r->guards);
    if (r->guards) {
      memcpy(r->guards, nb->guards, (size_t)nb->nguards * sizeof *r->guards);
      r->nguards = nb->nguards;
    }
  }
  r->text = sp_cursor_text(nb->az, e);
  unsigned line, col;
  sp_cursor_loc(e, &line, &col, NULL);
  r->loc = (sp_srcloc){nb->az->filename, line, col};
  n->nrefs++;
  if (a->irregular)
    sp_nb_note(nb, e, "access %s: %s; kept as an irregular access (lanes that differ in "
               "its value each reach a line of their own)", r->text ? r->text : "?", a->why);
}

static void sp_note_scalar(sp_nb *nb, CXCursor e, bool read, bool write) {
  CXCursor decl = clang_getCursorReferenced(e);
  enum CXCursorKind dk = clang_getCursorKind(decl);
  if (dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl) return;
  for (int k = 0; k < nb->nest->nloops; k++)
    if (clang_equalCursors(nb->loopvar[k], decl)) {
      if (write) sp_nb_skip(nb, e, "the loop index is assigned in the loop body: nest skipped");
      return;
    }
  if (write) sp_local_assigned(sp_nb_local(nb, decl), "the nest");
  if (!SP_GROW(nb->events, nb->nevents, nb->cap_events)) return;
  sp_scalar_event *ev = &nb->events[nb->nevents++];
  ev->decl = decl;
  CXString s = clang_getCursorSpelling(decl);
  ev->name = strdup(clang_getCString(s));
  clang_disposeString(s);
  ev->read = read;
  ev->write = write;
  ev->loopmask = sp_stack_mask(nb);
  sp_cursor_loc(e, &ev->line, &ev->col, NULL);
}

/* An access to lvalue e: memory reference(s), or a scalar event for registers. */
static bool sp_push_branch_guards(sp_nb *nb, CXCursor cond, bool negate);

CXCursor sp_local_choice(const sp_local_value *lv) {
  if (!lv || lv->valid || lv->assigned || lv->pointer || clang_Cursor_isNull(lv->init))
    return clang_getNullCursor();
  CXCursor init = sp_strip(lv->init);
  return clang_getCursorKind(init) == CXCursor_ConditionalOperator ? init : clang_getNullCursor();
}

typedef struct sp_choice_find {
  sp_nb *nb;
  CXCursor found;
} sp_choice_find;

/* A `c ? x : y` whose condition is no constant, written in the visited expression or in the
 * initializer of a local it reads (`jm = j == 0 ? n - 1 : j - 1`). */
static enum CXChildVisitResult sp_find_choice(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  sp_choice_find *f = d;
  CXCursor s = sp_strip(c);
  if (clang_getCursorKind(s) == CXCursor_DeclRefExpr) {
    CXCursor init = sp_local_choice(sp_nb_local(f->nb, clang_getCursorReferenced(s)));
    if (!clang_Cursor_isNull(init)) s = init;
  }
  if (clang_getCursorKind(s) == CXCursor_ConditionalOperator) {
    CXCursor kids[3];
    sp_affine v;
    if (sp_children(s, kids, 3) == 3 &&
        !(sp_expr_affine(f->nb->az, f->nb, kids[0], &v, NULL) == SP_AFF_OK && sp_affine_is_const(&v))) {
      f->found = s;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static void sp_access_lvalue(sp_nb *nb, CXCursor e, bool read, bool write) {
  CXCursor s = sp_strip(e);
  if (clang_getCursorKind(s) == CXCursor_DeclRefExpr) {
    sp_note_scalar(nb, s, read, write);
    return;
  }
  /* an address that takes one of two values by a condition on the indices (a periodic boundary,
   * a[i][j == 0 ? n - 1 : j - 1]): an access under the condition and one under its negation */
  sp_choice_find f = {nb, clang_getNullCursor()};
  if (clang_Cursor_isNull(nb->forced_choice)) clang_visitChildren(s, sp_find_choice, &f);
  CXCursor kids[3];
  if (!clang_Cursor_isNull(f.found) && sp_children(f.found, kids, 3) == 3) {
    const int saved = nb->nguards;
    bool guarded = true;
    for (int branch = 0; guarded && branch < 2; branch++) {
      guarded = sp_push_branch_guards(nb, kids[0], branch == 1);
      nb->nguards = saved;
    }
    for (int branch = 0; guarded && branch < 2; branch++) {
      sp_push_branch_guards(nb, kids[0], branch == 1);
      nb->forced_choice = f.found;
      nb->forced_branch = branch;
      sp_access_lvalue(nb, e, read, write);
      nb->forced_choice = clang_getNullCursor();
      nb->nguards = saved;
    }
    if (guarded) return;
  }
  sp_addr a;
  memset(&a, 0, sizeof a);
  a.array = -1;
  if (!sp_lvalue_addr(nb, s, &a) || a.array < 0) {
    sp_walk_expr(nb, s);
    return;
  }
  if (read) sp_emit_ref(nb, s, &a, SP_READ, read && write);
  if (write) sp_emit_ref(nb, s, &a, SP_WRITE, read && write);
}

static bool sp_is_memory_lvalue(CXCursor s) {
  enum CXCursorKind k = clang_getCursorKind(s);
  return k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr;
}

static const char *const sp_pure_functions[] = {
    "sqrt", "sqrtf", "fabs", "fabsf", "exp", "expf", "log", "logf", "sin", "sinf", "cos",
    "cosf", "tan", "pow", "powf", "fmin", "fmax", "fminf", "fmaxf", "floor", "ceil", "abs",
    "labs", "tanh", "atan", "atan2", "exp2", "log2", "log10", "cbrt", "hypot", "erf", "fma",
    "round", "trunc", "copysign", "min", "max", "rsqrt", NULL};

static void sp_walk_call(sp_nb *nb, CXCursor e) {
  CXCursor kids[24];
  int n = sp_children(e, kids, 24);
  if (n > 24) n = 24;
  CXString s = clang_getCursorSpelling(e);
  char name[96];
  snprintf(name, sizeof name, "%s", clang_getCString(s));
  clang_disposeString(s);
  bool pointer_arg = false;
  for (int i = 1; i < n; i++) {
    if (sp_is_pointerish(clang_getCursorType(sp_strip(kids[i])))) pointer_arg = true;
    sp_walk_expr(nb, kids[i]);
  }
  bool pure = false;
  for (int i = 0; sp_pure_functions[i]; i++)
    if (strcmp(name, sp_pure_functions[i]) == 0) pure = true;
  if (pointer_arg)
    sp_nb_note(nb, e, "call to '%s' with a pointer argument: the accesses inside '%s' are not "
               "modeled; only its arguments are counted", name, name);
  else if (!pure)
    sp_nb_note(nb, e, "call to '%s': assumed to touch no global memory", name);
}

/* `e % m == r` (or !=, per o) as a parity guard: e affine in the loop indices, m a constant of
 * at least 2, r (`other`; NULL cursor: 0) a constant, or a scalar whose value is not known,
 * taken as 0 (a red-black sweep's color: either value selects as many iterations alike). */
static bool sp_mod_guard(sp_nb *nb, CXCursor mod, CXCursor other, const char *o, sp_guard *g) {
  mod = sp_strip(mod);
  CXCursor kids[2];
  char op[8];
  if (clang_getCursorKind(mod) != CXCursor_BinaryOperator || sp_children(mod, kids, 2) != 2) return false;
  sp_operator(nb->az, mod, op, sizeof op);
  sp_affine e, m, r;
  if (strcmp(op, "%") != 0 || sp_expr_affine(nb->az, nb, kids[0], &e, NULL) != SP_AFF_OK ||
      sp_affine_is_const(&e) || sp_expr_affine(nb->az, nb, kids[1], &m, NULL) != SP_AFF_OK ||
      !sp_affine_is_const(&m) || m.constant < 2)
    return false;
  sp_aff_err err;
  sp_aff_status st = clang_Cursor_isNull(other) ? (r = sp_affine_const(0), SP_AFF_OK)
                                                : sp_expr_affine(nb->az, nb, other, &r, &err);
  if (st == SP_AFF_UNKNOWN && clang_getCursorKind(sp_strip(other)) == CXCursor_DeclRefExpr) {
    sp_nb_note(nb, other, "the value of '%s' is not known: the guard is modeled with it 0 (each "
               "value selects as many iterations alike); give it with --param %s=VALUE",
               err.why, err.why);
    r = sp_affine_const(0);
  } else if (st != SP_AFF_OK || !sp_affine_is_const(&r)) {
    return false;
  }
  *g = (sp_guard){.expr = e, .cmp = strcmp(o, "==") == 0 ? SP_CMP_EQ0 : SP_CMP_NE0,
                  .modulus = m.constant, .remainder = r.constant};
  return true;
}

/* Condition -> guards (conjunction of affine comparisons and parity guards). */
static bool sp_cond_guards(sp_nb *nb, CXCursor c, bool negate, sp_guard *out, int *n, int max) {
  c = sp_strip(c);
  enum CXCursorKind k = clang_getCursorKind(c);
  CXCursor kids[2];
  char op[8];
  if (k == CXCursor_UnaryOperator && sp_children(c, kids, 1) == 1) {
    sp_operator(nb->az, c, op, sizeof op);
    return strcmp(op, "!") == 0 && sp_cond_guards(nb, kids[0], !negate, out, n, max);
  }
  if (k != CXCursor_BinaryOperator || sp_children(c, kids, 2) != 2) return false;
  sp_operator(nb->az, c, op, sizeof op);
  if (strcmp(op, "%") == 0) { /* `if ((i + j) % 2)`: != 0 */
    sp_guard g = {.negated_group = 0};
    if (*n >= max || !sp_mod_guard(nb, c, clang_getNullCursor(), negate ? "==" : "!=", &g)) return false;
    out[(*n)++] = g;
    return true;
  }
  if (strcmp(op, "&&") == 0 && !negate)
    return sp_cond_guards(nb, kids[0], false, out, n, max) &&
           sp_cond_guards(nb, kids[1], false, out, n, max);
  if (strcmp(op, "||") == 0 && negate) /* !(a || b) = !a && !b */
    return sp_cond_guards(nb, kids[0], true, out, n, max) &&
           sp_cond_guards(nb, kids[1], true, out, n, max);
  static const struct { const char *op, *neg; } flips[] = {
      {"<", ">="}, {"<=", ">"}, {">", "<="}, {">=", "<"}, {"==", "!="}, {"!=", "=="}};
  const char *o = NULL;
  for (size_t i = 0; i < sizeof flips / sizeof *flips; i++)
    if (strcmp(op, flips[i].op) == 0) o = negate ? flips[i].neg : flips[i].op;
  if (!o || *n >= max) return false;
  sp_guard g = {.negated_group = 0};
  if ((strcmp(o, "==") == 0 || strcmp(o, "!=") == 0) &&
      (sp_mod_guard(nb, kids[0], kids[1], o, &g) || sp_mod_guard(nb, kids[1], kids[0], o, &g))) {
    out[(*n)++] = g;
    return true;
  }
  sp_affine l, r, d;
  if (sp_expr_affine(nb->az, nb, kids[0], &l, NULL) != SP_AFF_OK ||
      sp_expr_affine(nb->az, nb, kids[1], &r, NULL) != SP_AFF_OK)
    return false;
  bool ok;
  if (strcmp(o, "<") == 0 || strcmp(o, "<=") == 0) { /* r - l (- 1) >= 0 */
    ok = sp_affine_sub(&d, &r, &l) && (strcmp(o, "<=") == 0 || !__builtin_sub_overflow(d.constant, 1, &d.constant));
    g.cmp = SP_CMP_GE0;
  } else if (strcmp(o, ">") == 0 || strcmp(o, ">=") == 0) {
    ok = sp_affine_sub(&d, &l, &r) && (strcmp(o, ">=") == 0 || !__builtin_sub_overflow(d.constant, 1, &d.constant));
    g.cmp = SP_CMP_GE0;
  } else {
    ok = sp_affine_sub(&d, &l, &r);
    g.cmp = strcmp(o, "==") == 0 ? SP_CMP_EQ0 : SP_CMP_NE0;
  }
  if (!ok) return false;
  g.expr = d;
  out[(*n)++] = g;
  return true;
}

static void sp_walk_stmt(sp_nb *nb, CXCursor s);

/* Pushes the guards under which a branch runs (cond, or !cond where negate) onto nb's stack: a
 * conjunction of affine conditions, or one negated group where the branch runs unless such a
 * conjunction holds. false where neither is affine. */
static bool sp_push_branch_guards(sp_nb *nb, CXCursor cond, bool negate) {
  sp_guard g[16];
  int ng = 0;
  bool plain = sp_cond_guards(nb, cond, negate, g, &ng, 16);
  if (!plain && (ng = 0, !sp_cond_guards(nb, cond, !negate, g, &ng, 16))) return false;
  if (nb->nguards + ng > 32) return false;
  int group = plain ? 0 : ++nb->negated_groups;
  for (int i = 0; i < ng; i++) g[i].negated_group = group;
  memcpy(nb->guards + nb->nguards, g, (size_t)ng * sizeof *g);
  nb->nguards += ng;
  return true;
}

/* The first scalar whose value is not known (a run-time parameter, for --param) that keeps an
 * operand of condition c from being affine, into name; false where there is none. */
static bool sp_cond_unknown(sp_nb *nb, CXCursor c, char *name, size_t cap) {
  c = sp_strip(c);
  CXCursor kids[2];
  enum CXCursorKind k = clang_getCursorKind(c);
  int nk = k == CXCursor_BinaryOperator || k == CXCursor_UnaryOperator ? sp_children(c, kids, 2) : 0;
  char op[8] = "";
  if (nk >= 1) sp_operator(nb->az, c, op, sizeof op);
  bool logical = !strcmp(op, "&&") || !strcmp(op, "||") || !strcmp(op, "!") || !strcmp(op, "<") ||
                 !strcmp(op, "<=") || !strcmp(op, ">") || !strcmp(op, ">=") || !strcmp(op, "==") ||
                 !strcmp(op, "!=");
  if (logical && nk >= 1 && nk <= 2) {
    for (int i = 0; i < nk; i++)
      if (sp_cond_unknown(nb, kids[i], name, cap)) return true;
    return false;
  }
  sp_affine v;
  sp_aff_err err;
  if (sp_expr_affine(nb->az, nb, c, &v, &err) != SP_AFF_UNKNOWN) return false;
  snprintf(name, cap, "%s", err.why);
  return true;
}

/* The note for a branch whose condition gives no guards (else_of_conjunction: the else branch of
 * a && b whose parts are not all affine). */
static void sp_note_unguarded(sp_nb *nb, CXCursor cond, bool else_of_conjunction) {
  char *text = sp_cursor_text(nb->az, cond);
  char unknown[sizeof ((sp_aff_err *)0)->why];
  if (sp_cond_unknown(nb, cond, unknown, sizeof unknown))
    sp_nb_note(nb, cond, "condition '%s' needs the value of '%s': give it with --param %s=VALUE; "
               "until then the accesses under it are counted as always executed",
               text ? text : "?", unknown, unknown);
  else if (else_of_conjunction)
    sp_nb_note(nb, cond, "the else branch of '%s' is not a conjunction of affine conditions: "
               "its accesses are counted as always executed", text ? text : "?");
  else
    sp_nb_note(nb, cond, "condition '%s' is not affine in the loop indices (data-dependent): "
               "the accesses under it are counted as always executed", text ? text : "?");
  free(text);
}

/* A branch of an if or ?: : guarded when the condition is affine. Where the branch runs unless
 * a conjunction holds (the else branch of `if (a && b)`, `if (!(a && b))`, the then branch of
 * `if (a || b)`), the conjunction is kept as a negated group of guards. */
static void sp_walk_guarded(sp_nb *nb, CXCursor cond, CXCursor body, bool negate, bool is_stmt,
                            bool single_cond) {
  int saved = nb->nguards;
  if (!sp_push_branch_guards(nb, cond, negate)) sp_note_unguarded(nb, cond, negate && !single_cond);
  if (is_stmt) sp_walk_stmt(nb, body);
  else sp_walk_expr(nb, body);
  nb->nguards = saved;
}

/* An lvalue whose address is taken, not its value: its subscripts' loads, no access. */
static void sp_walk_address(sp_nb *nb, CXCursor lvalue) {
  sp_addr a;
  memset(&a, 0, sizeof a);
  sp_lvalue_addr(nb, lvalue, &a);
}

static void sp_walk_expr(sp_nb *nb, CXCursor e) {
  if (nb->skip) return;
  if (++nb->depth_guard > 200) {
    sp_nb_skip(nb, e, "expression nested too deeply: nest skipped");
    nb->depth_guard--;
    return;
  }
  CXCursor s = sp_strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  CXCursor kids[3];
  int nk;
  char op[8];
  switch (k) {
    case CXCursor_ArraySubscriptExpr:
    case CXCursor_MemberRefExpr:
      if (sp_is_array_type(clang_getCanonicalType(clang_getCursorType(s))))
        sp_walk_address(nb, s); /* a row a[i] that decays to its address */
      else
        sp_access_lvalue(nb, s, true, false);
      break;
    case CXCursor_DeclRefExpr:
      sp_note_scalar(nb, s, true, false);
      break;
    case CXCursor_BinaryOperator:
      nk = sp_children(s, kids, 2);
      if (nk != 2) break;
      sp_operator(nb->az, s, op, sizeof op);
      if (strcmp(op, "=") == 0) {
        sp_walk_expr(nb, kids[1]);
        sp_access_lvalue(nb, kids[0], false, true);
      } else {
        sp_walk_expr(nb, kids[0]);
        sp_walk_expr(nb, kids[1]);
      }
      break;
    case CXCursor_CompoundAssignOperator:
      if (sp_children(s, kids, 2) != 2) break;
      sp_walk_expr(nb, kids[1]);
      sp_access_lvalue(nb, kids[0], true, true);
      break;
    case CXCursor_UnaryOperator:
      if (sp_children(s, kids, 1) != 1) break;
      sp_operator(nb->az, s, op, sizeof op);
      if (strcmp(op, "++") == 0 || strcmp(op, "--") == 0) {
        sp_access_lvalue(nb, kids[0], true, true);
      } else if (strcmp(op, "*") == 0) {
        sp_access_lvalue(nb, s, true, false);
      } else if (strcmp(op, "&") == 0) {
        CXCursor t = sp_strip(kids[0]);
        if (sp_is_memory_lvalue(t)) sp_walk_address(nb, t);
      } else {
        sp_walk_expr(nb, kids[0]);
      }
      break;
    case CXCursor_ConditionalOperator:
      if (sp_children(s, kids, 3) != 3) break;
      sp_walk_expr(nb, kids[0]);
      sp_walk_guarded(nb, kids[0], kids[1], false, false, true);
      sp_walk_guarded(nb, kids[0], kids[2], true, false, true);
      break;
    case CXCursor_CallExpr:
      sp_walk_call(nb, s);
      break;
    case CXCursor_StmtExpr:
      sp_nb_skip(nb, s, "statement expression in a loop body: nest skipped");
      break;
    default: {
      CXCursor all[16];
      int n = sp_children(s, all, 16);
      for (int i = 0; i < n && i < 16; i++)
        if (clang_isExpression(clang_getCursorKind(all[i]))) sp_walk_expr(nb, all[i]);
    }
  }
  nb->depth_guard--;
}

static void sp_walk_decl(sp_nb *nb, CXCursor decl_stmt) {
  CXCursor vars[32];
  int n = sp_children(decl_stmt, vars, 32);
  for (int i = 0; i < n && i < 32; i++) {
    if (clang_getCursorKind(vars[i]) != CXCursor_VarDecl) continue;
    CXType t = clang_getCursorType(vars[i]);
    CXCursor kids[8];
    int nk = sp_children(vars[i], kids, 8);
    CXCursor init = clang_getNullCursor();
    for (int j = nk - 1; j >= 0 && j < 8; j--)
      if (clang_isExpression(clang_getCursorKind(kids[j]))) {
        init = kids[j];
        break;
      }
    if (sp_is_array_type(t)) {
      CXString s = clang_getCursorSpelling(vars[i]);
      sp_nb_note(nb, vars[i], "array '%s' declared in the loop body is private to each "
                 "iteration (registers or local memory): its accesses are not counted",
                 clang_getCString(s));
      clang_disposeString(s);
      continue;
    }
    if (clang_Cursor_isNull(init)) continue;
    sp_walk_expr(nb, init);
    if (SP_GROW(nb->locals, nb->nlocals, nb->cap_locals)) {
      sp_local_value *lv = &nb->locals[nb->nlocals++];
      memset(lv, 0, sizeof *lv);
      lv->decl = vars[i];
      sp_aff_err err;
      memset(&err, 0, sizeof err);
      CXString name = clang_getCursorSpelling(vars[i]);
      snprintf(lv->name, sizeof lv->name, "%s", clang_getCString(name));
      clang_disposeString(name);
      if (clang_getCanonicalType(t).kind == CXType_Pointer) {
        lv->pointer = true;
        lv->init = init;
        lv->valid = true;
        continue;
      }
      lv->init = init;
      lv->valid = sp_expr_affine(nb->az, nb, init, &lv->value, &err) == SP_AFF_OK;
      if (!lv->valid) {
        char *text = sp_cursor_text(nb->az, init);
        snprintf(lv->why, sizeof lv->why, "'%s' is initialized with '%.150s' (%.150s)", lv->name,
                 text ? text : "?", err.why);
        free(text);
      }
    }
  }
}

/* `if (c) continue;` or `if (c) { ...; continue; }` (no else): its condition in *cond and its
 * then branch in *then, a block whose last statement is the continue, or the continue. */
static bool sp_continue_if(CXCursor s, CXCursor *cond, CXCursor *then) {
  CXCursor kids[3];
  if (clang_getCursorKind(s) != CXCursor_IfStmt || sp_children(s, kids, 3) != 2) return false;
  CXCursor t = kids[1];
  if (clang_getCursorKind(t) == CXCursor_CompoundStmt) {
    int n = sp_children(t, NULL, 0);
    CXCursor *all = n > 0 ? malloc((size_t)n * sizeof *all) : NULL;
    bool last_continue = all && sp_children(t, all, n) == n &&
                         clang_getCursorKind(all[n - 1]) == CXCursor_ContinueStmt;
    free(all);
    if (!last_continue) return false;
  } else if (clang_getCursorKind(t) != CXCursor_ContinueStmt) {
    return false;
  }
  *cond = kids[0];
  *then = t;
  return true;
}

/* The statements of a continue's then branch before the continue, under its condition. */
static void sp_walk_before_continue(sp_nb *nb, CXCursor cond, CXCursor then) {
  if (clang_getCursorKind(then) != CXCursor_CompoundStmt) return;
  int n = sp_children(then, NULL, 0);
  if (n < 2) return;
  CXCursor *all = malloc((size_t)n * sizeof *all);
  if (!all) return;
  const int saved = nb->nguards;
  if (sp_children(then, all, n) == n) {
    if (!sp_push_branch_guards(nb, cond, false)) sp_note_unguarded(nb, cond, false);
    for (int i = 0; i + 1 < n && !nb->skip; i++) sp_walk_stmt(nb, all[i]);
  }
  nb->nguards = saved;
  free(all);
}

/* `if (c) continue;` directly in a loop's body: the statements after it in the body run where c
 * does not hold, as the else branch of c (sp_walk_guarded's guards, kept to the block's end). */
static void sp_guard_rest(sp_nb *nb, CXCursor cond) {
  if (sp_push_branch_guards(nb, cond, true)) return;
  char *text = sp_cursor_text(nb->az, cond);
  sp_nb_note(nb, cond, "continue under '%s', which is not affine in the loop indices: the "
             "accesses after it are counted as always executed", text ? text : "?");
  free(text);
}

static void sp_walk_stmt(sp_nb *nb, CXCursor s) {
  if (nb->skip) return;
  enum CXCursorKind k = clang_getCursorKind(s);
  CXCursor kids[3];
  int n;
  switch (k) {
    case CXCursor_ForStmt:
      sp_nb_walk_loop(nb, s, nb->nstack ? nb->stack[nb->nstack - 1] : -1, false);
      break;
    case CXCursor_CompoundStmt: {
      CXCursor *all = malloc(4096 * sizeof *all);
      if (!all) return;
      n = sp_children(s, all, 4096);
      if (n > 4096) sp_nb_skip(nb, s, "more than 4096 statements in one block: nest skipped");
      const int saved = nb->nguards;
      const bool loop_body = nb->nstack > 0 && clang_equalCursors(s, nb->loop_body[nb->stack[nb->nstack - 1]]);
      for (int i = 0; i < n && i < 4096 && !nb->skip; i++) {
        CXCursor cond, then;
        if (loop_body && sp_continue_if(all[i], &cond, &then)) {
          sp_walk_expr(nb, cond);
          sp_walk_before_continue(nb, cond, then);
          sp_guard_rest(nb, cond);
        } else {
          sp_walk_stmt(nb, all[i]);
        }
      }
      nb->nguards = saved;
      free(all);
      break;
    }
    case CXCursor_DeclStmt:
      sp_walk_decl(nb, s);
      break;
    case CXCursor_IfStmt: {
      n = sp_children(s, kids, 3);
      if (n < 2) break;
      sp_walk_expr(nb, kids[0]);
      CXCursor cond = sp_strip(kids[0]);
      char op[8] = "";
      if (clang_getCursorKind(cond) == CXCursor_BinaryOperator)
        sp_operator(nb->az, cond, op, sizeof op);
      sp_walk_guarded(nb, kids[0], kids[1], false, true, true);
      if (n == 3) sp_walk_guarded(nb, kids[0], kids[2], true, true, strcmp(op, "&&") != 0);
      break;
    }
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
      sp_nb_skip(nb, s, "%s loop in the nest: its trip count is unknown, so the nest is skipped "
                 "(rewrite it as a counted for loop to have it modeled)",
                 k == CXCursor_WhileStmt ? "while" : "do-while");
      break;
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
      sp_nb_skip(nb, s, "goto in the nest: control flow cannot be modeled; nest skipped");
      break;
    case CXCursor_BreakStmt:
      if (nb->switch_depth > 0) break; /* leaves the switch, whose cases all count */
      /* fallthrough */
    case CXCursor_ReturnStmt:
      sp_nb_skip(nb, s, "%s leaves the loop early: trip counts cannot be modeled; nest skipped",
                 k == CXCursor_BreakStmt ? "break" : "return");
      break;
    case CXCursor_ContinueStmt:
      sp_nb_note(nb, s, "continue: the accesses after it are counted as always executed");
      break;
    case CXCursor_SwitchStmt:
      sp_nb_note(nb, s, "switch: the accesses of every case are counted as executed");
      n = sp_children(s, kids, 2);
      if (n == 2) {
        sp_walk_expr(nb, kids[0]);
        nb->switch_depth++;
        sp_walk_stmt(nb, kids[1]);
        nb->switch_depth--;
      }
      break;
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_LabelStmt: {
      n = sp_children(s, kids, 3);
      for (int i = 0; i < n && i < 3; i++) {
        if (clang_isExpression(clang_getCursorKind(kids[i])) && k == CXCursor_CaseStmt && i == 0)
          continue;
        sp_walk_stmt(nb, kids[i]);
      }
      break;
    }
    case CXCursor_NullStmt:
      break;
    default:
      if (clang_isExpression(k)) sp_walk_expr(nb, s);
      else if (k != CXCursor_UnexposedStmt)
        sp_nb_note(nb, s, "statement not modeled; its accesses are ignored");
      else
        sp_walk_expr(nb, s);
  }
}

/* ---- loops ----------------------------------------------------------------------------------- */

typedef struct sp_for_parts {
  CXCursor init, cond, inc, body;
} sp_for_parts;

static bool sp_for_parts_of(sp_az *az, CXCursor f, sp_for_parts *p) {
  p->init = p->cond = p->inc = p->body = clang_getNullCursor();
  CXToken *toks = NULL;
  unsigned ntoks = 0;
  clang_tokenize(az->tu, clang_getCursorExtent(f), &toks, &ntoks);
  unsigned semi[2] = {0, 0}, rparen = 0;
  int nsemi = 0, depth = 0;
  for (unsigned i = 0; i < ntoks; i++) {
    CXString s = clang_getTokenSpelling(az->tu, toks[i]);
    const char *t = clang_getCString(s);
    unsigned off;
    clang_getExpansionLocation(clang_getTokenLocation(az->tu, toks[i]), NULL, NULL, NULL, &off);
    bool done = false;
    if (strcmp(t, "(") == 0) depth++;
    else if (strcmp(t, ")") == 0 && --depth == 0) {
      rparen = off;
      done = true;
    } else if (strcmp(t, ";") == 0 && depth == 1 && nsemi < 2)
      semi[nsemi++] = off;
    clang_disposeString(s);
    if (done) break;
  }
  if (toks) clang_disposeTokens(az->tu, toks, ntoks);
  if (nsemi != 2 || !rparen) return false;
  CXCursor kids[4];
  int n = sp_children(f, kids, 4);
  for (int i = 0; i < n && i < 4; i++) {
    unsigned b, e;
    sp_cursor_range(kids[i], &b, &e);
    if (b < semi[0]) p->init = kids[i];
    else if (b < semi[1]) p->cond = kids[i];
    else if (b < rparen) p->inc = kids[i];
    else p->body = kids[i];
  }
  return !clang_Cursor_isNull(p->body);
}

static bool sp_refers_to(CXCursor e, CXCursor decl) {
  e = sp_strip(e);
  return clang_getCursorKind(e) == CXCursor_DeclRefExpr &&
         clang_equalCursors(clang_getCursorReferenced(e), decl);
}

/* Index variable and its first value. */
static bool sp_loop_init(sp_az *az, CXCursor init, CXCursor *var, CXCursor *first) {
  enum CXCursorKind k = clang_getCursorKind(init);
  CXCursor kids[4];
  if (k == CXCursor_DeclStmt) {
    if (sp_children(init, kids, 2) != 1 || clang_getCursorKind(kids[0]) != CXCursor_VarDecl)
      return false;
    *var = kids[0];
    int n = sp_children(*var, kids, 4);
    for (int i = (n < 4 ? n : 4) - 1; i >= 0; i--)
      if (clang_isExpression(clang_getCursorKind(kids[i]))) {
        *first = kids[i];
        return true;
      }
    return false;
  }
  if (k == CXCursor_BinaryOperator && sp_children(init, kids, 2) == 2) {
    char op[8];
    sp_operator(az, init, op, sizeof op);
    CXCursor l = sp_strip(kids[0]);
    if (strcmp(op, "=") || clang_getCursorKind(l) != CXCursor_DeclRefExpr) return false;
    *var = clang_getCursorReferenced(l);
    *first = kids[1];
    return true;
  }
  return false;
}

bool sp_for_index(sp_az *az, CXCursor f, CXCursor *var, CXCursor *first) {
  sp_for_parts p;
  *var = *first = clang_getNullCursor();
  return sp_for_parts_of(az, f, &p) && !clang_Cursor_isNull(p.init) &&
         sp_loop_init(az, p.init, var, first);
}

static bool sp_loop_step(sp_nb *nb, CXCursor inc, CXCursor var, int64_t *step) {
  enum CXCursorKind k = clang_getCursorKind(inc);
  CXCursor kids[2];
  char op[8];
  sp_affine v;
  if (k == CXCursor_UnaryOperator && sp_children(inc, kids, 1) == 1 && sp_refers_to(kids[0], var)) {
    sp_operator(nb->az, inc, op, sizeof op);
    if (strcmp(op, "++") == 0) *step = 1;
    else if (strcmp(op, "--") == 0) *step = -1;
    else return false;
    return true;
  }
  if (k == CXCursor_CompoundAssignOperator && sp_children(inc, kids, 2) == 2 &&
      sp_refers_to(kids[0], var)) {
    sp_operator(nb->az, inc, op, sizeof op);
    if (sp_expr_affine(nb->az, nb, kids[1], &v, NULL) != SP_AFF_OK || !sp_affine_is_const(&v))
      return false;
    if (strcmp(op, "+=") == 0) *step = v.constant;
    else if (strcmp(op, "-=") == 0 && v.constant != INT64_MIN) *step = -v.constant;
    else return false;
    return true;
  }
  if (k == CXCursor_BinaryOperator && sp_children(inc, kids, 2) == 2 && sp_refers_to(kids[0], var)) {
    sp_operator(nb->az, inc, op, sizeof op);
    CXCursor r = sp_strip(kids[1]), rk[2];
    if (strcmp(op, "=") || clang_getCursorKind(r) != CXCursor_BinaryOperator ||
        sp_children(r, rk, 2) != 2)
      return false;
    sp_operator(nb->az, r, op, sizeof op);
    int vi = sp_refers_to(rk[0], var) ? 0 : sp_refers_to(rk[1], var) ? 1 : -1;
    if (vi < 0 || (strcmp(op, "+") && !(strcmp(op, "-") == 0 && vi == 0))) return false;
    if (sp_expr_affine(nb->az, nb, rk[1 - vi], &v, NULL) != SP_AFF_OK || !sp_affine_is_const(&v))
      return false;
    *step = op[0] == '-' ? -v.constant : v.constant;
    return true;
  }
  return false;
}

typedef struct sp_loop_writes {
  sp_nb *nb;
  const char *index;
} sp_loop_writes;

static enum CXChildVisitResult sp_find_local_write(CXCursor c, CXCursor parent,
                                                   CXClientData data) {
  (void)parent;
  sp_loop_writes *w = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  char op[8] = "";
  if (k == CXCursor_BinaryOperator || k == CXCursor_UnaryOperator)
    sp_operator(w->nb->az, c, op, sizeof op);
  bool assigns = k == CXCursor_CompoundAssignOperator || strcmp(op, "=") == 0 ||
                 strcmp(op, "++") == 0 || strcmp(op, "--") == 0;
  CXCursor kids[2];
  if (!assigns || sp_children(c, kids, 2) < 1) return CXChildVisit_Recurse;
  CXCursor target = sp_strip(kids[0]);
  if (clang_getCursorKind(target) != CXCursor_DeclRefExpr) return CXChildVisit_Recurse;
  char where[96];
  snprintf(where, sizeof where, "loop %s, so it differs from one iteration to the next",
           w->index);
  sp_local_assigned(sp_nb_local(w->nb, clang_getCursorReferenced(target)), where);
  return CXChildVisit_Recurse;
}

/* A local declared before loop f and assigned inside it (k++, p += n) changes from one of f's
 * iterations to the next: its initial value no longer describes it at a use that comes before
 * the assignment in the text. */
static void sp_invalidate_loop_writes(sp_nb *nb, CXCursor f, const char *index) {
  if (nb->nlocals == 0) return;
  sp_loop_writes w = {nb, index};
  clang_visitChildren(f, sp_find_local_write, &w);
}

/* What to do about a bound that is not affine, by why: a min or max (a tile's last, partial tile)
 * and a structure's member have ways around. Into buf, "" where none. */
static const char *sp_bound_hint(const char *text, const char *why, char *buf, size_t n) {
  buf[0] = 0;
  if (why && strstr(why, "conditional"))
    snprintf(buf, n, "; for a min or max of two bounds (a tile's last tile), run the loop to "
                     "one bound and put the other in an if inside it (for (i = ii; i < ii + 32; "
                     "i++) if (i < n) ...): the model reads affine guards");
  const char *dot = text ? strrchr(text, '.') : NULL, *arrow = text ? strstr(text, "->") : NULL;
  while (arrow && strstr(arrow + 2, "->")) arrow = strstr(arrow + 2, "->");
  const char *member = dot && (!arrow || dot > arrow) ? dot + 1 : arrow ? arrow + 2 : NULL;
  size_t ml = 0;
  while (member && (isalnum((unsigned char)member[ml]) || member[ml] == '_')) ml++;
  if (why && strstr(why, "loaded") && ml > 0 && !member[ml])
    snprintf(buf, n, "; it is a structure's member: copy it to a local before the compute "
                     "construct (long %s = %s;) and give its value with --param %s=VALUE",
             member, text, member);
  return buf;
}

void sp_nb_walk_loop(sp_nb *nb, CXCursor f, int parent, bool sole_child) {
  if (nb->skip) return;
  sp_nest *n = nb->nest;
  if (n->nloops >= SP_MAX_LOOPS) {
    sp_nb_skip(nb, f, "more than %d loops in one nest: nest skipped", SP_MAX_LOOPS);
    return;
  }
  unsigned fb, fe;
  sp_cursor_range(f, &fb, &fe);
  const char *macro;
  size_t ml = sp_word_instead_of_for(nb->az, fb, &macro);
  if (ml > 0) {
    sp_nb_skip(nb, f, "for loop written through macro '%.*s': the analyzer reads loops as the "
                      "file spells them: nest skipped; write the loop out, or run it on the "
                      "preprocessed file (cc -E -P FILE.c > FILE.pp.c keeps the pragmas)",
               (int)ml, macro);
    return;
  }
  sp_for_parts p;
  CXCursor var = clang_getNullCursor(), first = clang_getNullCursor();
  if (!sp_for_parts_of(nb->az, f, &p) || clang_Cursor_isNull(p.init) ||
      !sp_loop_init(nb->az, p.init, &var, &first)) {
    sp_nb_skip(nb, f, "for loop without an index initialization 'i = start': nest skipped");
    return;
  }
  int64_t step = 0;
  if (clang_Cursor_isNull(p.inc) || !sp_loop_step(nb, p.inc, var, &step)) {
    sp_nb_skip(nb, f, "loop increment is not a constant step (i++, i--, i += c): nest skipped");
    return;
  }
  if (step == 0) {
    sp_nb_skip(nb, f, "loop step is 0: the loop would not end; nest skipped");
    return;
  }
  int id = n->nloops;
  sp_loop *L = &n->loops[id];
  memset(L, 0, sizeof *L);
  CXString vs = clang_getCursorSpelling(var);
  L->index = strdup(clang_getCString(vs));
  clang_disposeString(vs);
  L->parent = parent;
  L->depth = parent < 0 ? 0 : n->loops[parent].depth + 1;
  L->step = step;
  unsigned line, col;
  sp_cursor_loc(f, &line, &col, NULL);
  L->loc = (sp_srcloc){nb->az->filename, line, col};
  sp_cursor_range(f, &nb->loop_begin[id], &nb->loop_end[id]);
  nb->loop_sole_child[id] = sole_child;
  n->nloops++; /* visible to diagnostics; the index is registered after the bounds */

  sp_aff_err err;
  char hint[256];
  memset(&err, 0, sizeof err);
  sp_aff_status st = sp_expr_affine(nb->az, nb, first, &L->lower, &err);
  L->lower_text = sp_cursor_text(nb->az, first);
  if (st != SP_AFF_OK) {
    if (!sp_value_ok(nb, st, &err, "the lower bound of the loop"))
      if (st == SP_AFF_NONAFFINE)
        sp_nb_skip(nb, first, "lower bound '%s' is not affine (%s): nest skipped%s",
                   L->lower_text ? L->lower_text : "?", err.why,
                   sp_bound_hint(L->lower_text, err.why, hint, sizeof hint));
    if (st != SP_AFF_NONAFFINE) nb->skip = true;
    return;
  }
  /* condition: index <op> bound, either way round */
  CXCursor c = sp_strip(p.cond), ck[2];
  char op[8] = "";
  int vi = -1;
  if (!clang_Cursor_isNull(c) && clang_getCursorKind(c) == CXCursor_BinaryOperator &&
      sp_children(c, ck, 2) == 2) {
    sp_operator(nb->az, c, op, sizeof op);
    vi = sp_refers_to(ck[0], var) ? 0 : sp_refers_to(ck[1], var) ? 1 : -1;
  }
  if (vi < 0 || !(strcmp(op, "<") == 0 || strcmp(op, "<=") == 0 || strcmp(op, ">") == 0 ||
                  strcmp(op, ">=") == 0 || strcmp(op, "!=") == 0)) {
    sp_nb_skip(nb, clang_Cursor_isNull(c) ? f : c,
               "loop condition is not a comparison of the index with a bound: nest skipped");
    return;
  }
  if (vi == 1) { /* bound <op> index  ->  index <flipped op> bound */
    if (op[0] == '<') op[0] = '>';
    else if (op[0] == '>') op[0] = '<';
  }
  CXCursor bound = ck[1 - vi];
  L->upper_text = sp_cursor_text(nb->az, bound);
  memset(&err, 0, sizeof err);
  st = sp_expr_affine(nb->az, nb, bound, &L->upper, &err);
  if (st != SP_AFF_OK) {
    if (!sp_value_ok(nb, st, &err, "the upper bound of the loop") && st == SP_AFF_NONAFFINE)
      sp_nb_skip(nb, bound, "loop bound '%s' is not affine (%s): nest skipped%s",
                 L->upper_text ? L->upper_text : "?", err.why,
                 sp_bound_hint(L->upper_text, err.why, hint, sizeof hint));
    if (st != SP_AFF_NONAFFINE) nb->skip = true;
    return;
  }
  /* an unsigned index stays >= 0: `for (unsigned i = n - 1; i >= 0; i--)` never ends */
  CXType vt = clang_getCanonicalType(clang_getCursorType(var));
  const bool is_unsigned = vt.kind == CXType_UInt || vt.kind == CXType_ULong ||
                           vt.kind == CXType_ULongLong || vt.kind == CXType_UShort ||
                           vt.kind == CXType_UChar || vt.kind == CXType_Char_U;
  if (is_unsigned && step < 0 && sp_affine_is_const(&L->upper) &&
      ((strcmp(op, ">=") == 0 && L->upper.constant <= 0) ||
       (strcmp(op, ">") == 0 && L->upper.constant < 0))) {
    char *cond = sp_cursor_text(nb->az, c);
    sp_nb_skip(nb, c, "'%s' holds for every value of the unsigned index '%s': the loop never "
               "ends (it wraps past 0): nest skipped; count down with a signed index",
               cond ? cond : "the condition", L->index);
    free(cond);
    return;
  }
  int64_t adjust = 0;
  if (strcmp(op, "<") == 0) adjust = -1;
  else if (strcmp(op, ">") == 0) adjust = 1;
  else if (strcmp(op, "!=") == 0) adjust = step > 0 ? -1 : 1;
  if ((step > 0 && op[0] == '>') || (step < 0 && op[0] == '<')) {
    /* (op is '<', '<=', '>' or '>=' here: '!=' moves towards its bound either way) */
    const int64_t from = L->lower.constant, to = L->upper.constant;
    const bool holds = op[0] == '<' ? (op[1] ? from <= to : from < to) : (op[1] ? from >= to : from > to);
    if (sp_loop_bounds_const(L) && !holds) {
      char *cond = sp_cursor_text(nb->az, c);
      sp_nb_skip(nb, c, "the loop runs no iteration: '%s' is false at its start (%s = %lld), so "
                 "the nest does nothing: nest skipped", cond ? cond : "its condition", L->index,
                 (long long)from);
      free(cond);
    } else
      sp_nb_skip(nb, c, "the loop runs away from its bound (step %lld with '%s'): nest skipped",
                 (long long)step, op);
    return;
  }
  if (__builtin_add_overflow(L->upper.constant, adjust, &L->upper.constant)) {
    sp_nb_skip(nb, bound, "loop bound overflows: nest skipped");
    return;
  }
  if (strcmp(op, "!=") == 0 && step != 1 && step != -1)
    sp_nb_note(nb, c, "'!=' condition with step %lld assumed to stop at the bound",
               (long long)step);
  nb->loopvar[id] = var;
  nb->loop_body[id] = p.body;
  snprintf(nb->loop_cmp[id], sizeof nb->loop_cmp[id], "%s",
           strcmp(op, "!=") == 0 ? (step > 0 ? "<" : ">") : op);

  /* the user's directive on this loop */
  int dirs[4];
  int nd = sp_directives_of(nb->az, f, dirs, 4);
  for (int i = 0; i < nd; i++) {
    sp_directive *d = &nb->az->dirs[dirs[i]];
    if (d->kind == SP_DIR_ACC_PARALLEL || d->kind == SP_DIR_ACC_KERNELS ||
        d->kind == SP_DIR_ACC_SERIAL || d->kind == SP_DIR_OMP_TARGET || d->kind == SP_DIR_OTHER)
      continue;
    nb->az->dir_used[dirs[i]] = true;
    sp_clauses *dst = &L->clauses;
    const sp_clauses *src = &d->clauses;
    dst->flags |= src->flags;
#define SP_TAKE(field) if (src->field) dst->field = src->field
    SP_TAKE(gang_arg); SP_TAKE(worker_arg); SP_TAKE(vector_arg); SP_TAKE(num_gangs);
    SP_TAKE(num_workers); SP_TAKE(vector_length); SP_TAKE(collapse);
#undef SP_TAKE
    if (src->ntile) {
      dst->ntile = src->ntile;
      memcpy(dst->tile, src->tile, sizeof dst->tile);
    }
    if (src->reduction) {
      free(dst->reduction);
      dst->reduction = strdup(src->reduction);
    }
    if (src->private_vars) {
      free(dst->private_vars);
      dst->private_vars = strdup(src->private_vars);
    }
    free(dst->directive);
    dst->directive = src->directive ? strdup(src->directive) : NULL;
    dst->directive_loc = src->directive_loc;
  }
  L->collapsed_into = -1;
  if (nb->collapse_left > 0) {
    nb->collapse_left--;
    L->collapsed_into = nb->collapse_owner;
  } else {
    int cover = L->clauses.collapse > 1 ? L->clauses.collapse : L->clauses.ntile;
    if (cover > 1) {
      nb->collapse_left = cover - 1;
      nb->collapse_owner = id;
    }
  }

  /* body: is the only statement in it a loop? */
  CXCursor body = p.body, inner = clang_getNullCursor();
  if (clang_getCursorKind(body) == CXCursor_ForStmt) inner = body;
  else if (clang_getCursorKind(body) == CXCursor_CompoundStmt) {
    CXCursor kids[2];
    if (sp_children(body, kids, 2) == 1 && clang_getCursorKind(kids[0]) == CXCursor_ForStmt)
      inner = kids[0];
  }
  sp_invalidate_loop_writes(nb, f, L->index);
  nb->stack[nb->nstack++] = id;
  const int switches = nb->switch_depth; /* a break in the body leaves this loop */
  nb->switch_depth = 0;
  if (!clang_Cursor_isNull(inner)) sp_nb_walk_loop(nb, inner, id, true);
  else sp_walk_stmt(nb, body);
  nb->switch_depth = switches;
  nb->nstack--;
  if (nb->collapse_left > 0 && nb->collapse_owner == id && !nb->skip) {
    const bool tile = L->clauses.collapse <= 1;
    const int cover = tile ? L->clauses.ntile : L->clauses.collapse;
    char clause[32];
    if (tile) snprintf(clause, sizeof clause, "tile(...)");
    else snprintf(clause, sizeof clause, "collapse(%d)", cover);
    const int found = cover - nb->collapse_left;
    sp_nb_warn(nb, f, "%s on loop '%s' covers %d loops, but only %d %s tightly nested here, "
               "which GCC rejects: the model takes the %d there %s",
               clause, L->index, cover, found, found == 1 ? "is" : "are", found,
               found == 1 ? "is" : "are");
    nb->collapse_left = 0;
  }
}

/* An array without a declared size that the nest reads irregularly (x[col[j]]): the extent of
 * its accesses is only their affine part's, which says nothing of where the lanes go (0 for
 * x[col[j]], one element). A data clause gives it (sp_clause_extents) when it names the array's
 * section (present(x[0:n])): the trace then spreads the lanes over all of it. Otherwise the size
 * stays unknown, and the user is told: the trace keeps the lanes within a few lines, which an L1
 * holds. */
static void sp_irregular_array_size(sp_nb *nb, int a) {
  sp_nest *n = nb->nest;
  sp_array *arr = &n->arrays[a];
  const sp_ref *irregular = NULL;
  for (int r = 0; r < n->nrefs && !irregular; r++)
    if (n->refs[r].array == a && n->refs[r].irregular) irregular = &n->refs[r];
  if (!irregular) return;
  int64_t ext[SP_MAX_LOOPS], elems = 1, bytes;
  const int dims = sp_clause_extents(nb, arr->name, ext);
  for (int d = 0; d < dims && elems > 0; d++)
    if (__builtin_mul_overflow(elems, ext[d], &elems)) elems = -1;
  if (dims > 0 && elems > 0 && !__builtin_mul_overflow(elems, arr->elem_size, &bytes)) {
    if (bytes > arr->total_bytes) arr->total_bytes = bytes;
    arr->size_from_access = false;
    return;
  }
  const size_t len = strlen(arr->name), table = strcspn(arr->name, "[");
  if (len > 4 && strcmp(arr->name + len - 4, "][*]") == 0 && table < len) { /* rows[i][*] */
    sp_diag_report(nb->az->diag, SP_WARNING, irregular->loc.file, irregular->loc.line,
                   irregular->loc.col,
                   "the length of the rows of '%.*s' is not known (%s reads through a row pointer): "
                   "the model keeps each lane in its own sector within a few KB, which overstates "
                   "the sectors and their reuse; give the rows' extent in a data clause of the "
                   "construct or of a data directive before it, e.g. present(%.*s[0:n][0:m]) "
                   "with n and m constants or --params",
                   (int)table, arr->name, irregular->text ? irregular->text : "its subscript",
                   (int)table, arr->name);
    return;
  }
  sp_diag_report(nb->az->diag, SP_WARNING, irregular->loc.file, irregular->loc.line,
                 irregular->loc.col,
                 "the size of '%s' is not known (%s is indirect): the model keeps its lanes within "
                 "a few KB, which overstates their reuse; give the array's extent in a "
                 "data clause of the construct or of a data directive before it, e.g. "
                 "present(%s[0:n]) with n a constant or a --param",
                 arr->name, irregular->text ? irregular->text : "its subscript", arr->name);
}

/* Sizes of arrays declared without a size: the extent the nest touches. Every reference's offset
 * range over the iteration space must fit in 64 bits. */
bool sp_nb_finish_arrays(sp_nb *nb, const int64_t *lo, const int64_t *hi) {
  sp_nest *n = nb->nest;
  if (!lo) {
    sp_diag_report(nb->az->diag, SP_ERROR, n->loc.file, n->loc.line, n->loc.col,
                   "loop bounds of this nest overflow 64-bit arithmetic; check --param and -D");
    if (nb->az->status < SP_EXIT_VALUE) nb->az->status = SP_EXIT_VALUE;
    return false;
  }
  __int128 *end = calloc((size_t)(n->narrays ? n->narrays : 1), sizeof *end);
  if (!end) return false;
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *ref = &n->refs[r];
    __int128 vmin, vmax;
    sp_affine_bounds(&ref->offset, n->nloops, lo, hi, &vmin, &vmax);
    vmax += ref->size;
    if (vmin < INT64_MIN || vmax > INT64_MAX) {
      sp_diag_report(nb->az->diag, SP_ERROR, ref->loc.file, ref->loc.line, ref->loc.col,
                     "the byte offset of %s does not fit in 64 bits over the loop ranges; "
                     "check the sizes given with --param or -D",
                     ref->text ? ref->text : "this access");
      if (nb->az->status < SP_EXIT_VALUE) nb->az->status = SP_EXIT_VALUE;
      free(end);
      return false;
    }
    if (vmax > end[ref->array]) end[ref->array] = vmax;
    const sp_array *arr = &n->arrays[ref->array];
    int64_t declared = arr->elem_size;
    /* only where the hull is exact: no guard, rectangular loops (else it could be a false alarm) */
    bool known = !ref->irregular && ref->nguards == 0;
    for (int k = 0; k < ref->nloops && known; k++) {
      const sp_loop *L = &n->loops[ref->loops[k]];
      known = sp_affine_is_const(&L->lower) && sp_affine_is_const(&L->upper);
    }
    for (int d = 0; d < arr->ndims && known; d++)
      known = arr->dims[d] >= 0 && !__builtin_mul_overflow(declared, arr->dims[d], &declared);
    if (known && (vmin < 0 || vmax > declared))
      sp_diag_report(nb->az->diag, SP_WARNING, ref->loc.file, ref->loc.line, ref->loc.col,
                     "%s reaches bytes %lld..%lld of '%s', declared with %lld bytes: the loop "
                     "bounds (--param / -D values?) do not fit the array",
                     ref->text ? ref->text : "this access", (long long)vmin, (long long)vmax - 1,
                     arr->name, (long long)declared);
  }
  for (int a = 0; a < n->narrays; a++) {
    sp_array *arr = &n->arrays[a];
    int64_t total = arr->elem_size;
    bool known = true;
    for (int d = 0; d < arr->ndims; d++) {
      if (arr->dims[d] < 0 || __builtin_mul_overflow(total, arr->dims[d], &total)) {
        known = false;
        break;
      }
    }
    arr->size_from_access = !known;
    arr->total_bytes = known ? total : (int64_t)end[a];
    if (!known) sp_irregular_array_size(nb, a);
  }
  free(end);
  return true;
}
