/* What code generation needs beyond the model (nest->codegen): the band's body as written, each
 * band loop's index type and comparison, the variables the nest takes from outside with their
 * roles (kernel array or scalar parameter, per-iteration private, reduction), and the macro and
 * type definitions the body's text depends on. A nest that cannot be turned into a kernel keeps
 * the reason in not_generated. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

/* ---- text helpers ------------------------------------------------------------------------------ */

typedef struct sp_buf {
  char *s;
  size_t n, cap;
} sp_buf;

static void sp_buf_add(sp_buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *g = realloc(b->s, cap);
    if (!g) return;
    b->s = g;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

static void sp_buf_str(sp_buf *b, const char *s) { sp_buf_add(b, s, strlen(s)); }

static char *sp_buf_take(sp_buf *b) {
  if (!b->s) return strdup("");
  return b->s;
}

/* Type spelling without const / volatile / restrict anywhere. */
static char *sp_unqualified(CXType t) {
  CXString cs = clang_getTypeSpelling(t);
  const char *s = clang_getCString(cs);
  static const char *const quals[] = {"const", "volatile", "restrict", "__restrict"};
  sp_buf b = {0};
  for (const char *p = s; *p;) {
    bool skipped = false;
    bool start = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    for (size_t q = 0; q < sizeof quals / sizeof *quals && start; q++) {
      size_t n = strlen(quals[q]);
      if (strncmp(p, quals[q], n) == 0 && !(isalnum((unsigned char)p[n]) || p[n] == '_')) {
        p += n;
        while (*p == ' ') p++;
        skipped = true;
        break;
      }
    }
    if (!skipped) sp_buf_add(&b, p++, 1);
  }
  clang_disposeString(cs);
  char *r = sp_buf_take(&b);
  size_t n = strlen(r);
  while (n && r[n - 1] == ' ') r[--n] = 0;
  return r;
}

/* The canonical spelling (typedefs from system headers resolved), unless that names an anonymous
 * record, which only the typedef can name. */
static char *sp_cg_type_name(CXType t) {
  char *canon = sp_unqualified(clang_getCanonicalType(t));
  if (canon && strcmp(canon, "_Bool") == 0) { /* C's spelling; CUDA is C++ */
    free(canon);
    return strdup("bool");
  }
  if (canon && !strstr(canon, "(anonymous") && !strstr(canon, "(unnamed")) return canon;
  free(canon);
  return sp_unqualified(t);
}

static bool sp_type_floating(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return k == CXType_Float || k == CXType_Double || k == CXType_LongDouble;
}

static bool sp_type_integer(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return (k >= CXType_Bool && k <= CXType_Int128) || k == CXType_Enum;
}

static bool sp_type_arrayish(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return k == CXType_Pointer || k == CXType_ConstantArray || k == CXType_IncompleteArray ||
         k == CXType_VariableArray;
}

/* The file's text between two offsets, with #pragma acc / omp lines (and their continuation
 * lines) left out. */
static char *sp_text_without_pragmas(const char *src, unsigned b, unsigned e) {
  sp_buf out = {0};
  unsigned i = b;
  while (i < e) {
    unsigned eol = i;
    while (eol < e && src[eol] != '\n') eol++;
    unsigned p = i;
    while (p < eol && (src[p] == ' ' || src[p] == '\t')) p++;
    bool pragma = false;
    if (p < eol && src[p] == '#') {
      unsigned q = p + 1;
      while (q < eol && (src[q] == ' ' || src[q] == '\t')) q++;
      if (eol - q >= 6 && strncmp(src + q, "pragma", 6) == 0) {
        q += 6;
        while (q < eol && (src[q] == ' ' || src[q] == '\t')) q++;
        pragma = (eol - q >= 3 && (strncmp(src + q, "acc", 3) == 0 || strncmp(src + q, "omp", 3) == 0));
      }
    }
    if (pragma) {
      /* skip the directive with its continuation lines */
      while (eol < e && eol > i && (src[eol - 1] == '\\' || (src[eol - 1] == '\r' && eol - 1 > i &&
                                                                  src[eol - 2] == '\\'))) {
        eol++;
        while (eol < e && src[eol] != '\n') eol++;
      }
    } else {
      sp_buf_add(&out, src + i, eol - i);
      if (eol < e) sp_buf_add(&out, "\n", 1);
    }
    i = eol + 1;
  }
  return sp_buf_take(&out);
}

/* ---- prelude ----------------------------------------------------------------------------------- */

char *sp_codegen_defines(char *const *args, int nargs) {
  sp_buf b = {0};
  for (int i = 0; i < nargs; i++) {
    const char *d = NULL;
    if (strcmp(args[i], "-D") == 0 && i + 1 < nargs) d = args[++i];
    else if (strncmp(args[i], "-D", 2) == 0 && args[i][2]) d = args[i] + 2;
    if (!d) continue;
    const char *eq = strchr(d, '=');
    sp_buf_str(&b, "#define ");
    if (eq) {
      sp_buf_add(&b, d, (size_t)(eq - d));
      sp_buf_str(&b, " ");
      sp_buf_str(&b, eq + 1);
    } else {
      sp_buf_str(&b, d);
      sp_buf_str(&b, " 1");
    }
    sp_buf_str(&b, "\n");
  }
  return sp_buf_take(&b);
}

typedef struct sp_def {
  unsigned begin, end;
  bool macro;
} sp_def;

typedef struct sp_def_list {
  sp_def *v;
  int n, cap;
} sp_def_list;

static enum CXChildVisitResult sp_collect_defs(CXCursor c, CXCursor parent, CXClientData d) {
  sp_def_list *l = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  bool macro = k == CXCursor_MacroDefinition;
  bool type = ((k == CXCursor_StructDecl || k == CXCursor_UnionDecl || k == CXCursor_EnumDecl) &&
               clang_isCursorDefinition(c)) ||
              k == CXCursor_TypedefDecl;
  if (!(macro || type) || !clang_Location_isFromMainFile(clang_getCursorLocation(c)))
    return CXChildVisit_Continue;
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 32;
    sp_def *g = realloc(l->v, (size_t)cap * sizeof *g);
    if (!g) return CXChildVisit_Break;
    l->v = g;
    l->cap = cap;
  }
  sp_def *e = &l->v[l->n++];
  sp_cursor_range(c, &e->begin, &e->end);
  e->macro = macro;
  return CXChildVisit_Continue;
}

static int sp_def_cmp(const void *a, const void *b) {
  const sp_def *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

char *sp_codegen_prelude(sp_az *az, const char *defines) {
  sp_def_list l = {0};
  clang_visitChildren(clang_getTranslationUnitCursor(az->tu), sp_collect_defs, &l);
  if (l.n > 1) qsort(l.v, (size_t)l.n, sizeof *l.v, sp_def_cmp);
  sp_buf b = {0};
  if (defines) sp_buf_str(&b, defines);
  unsigned covered = 0;
  for (int i = 0; i < l.n; i++) {
    const sp_def *e = &l.v[i];
    if (e->end > az->contents_len || e->begin >= e->end) continue;
    if (i > 0 && e->begin < covered) continue; /* the struct inside a typedef: already out */
    covered = e->end;
    if (e->macro) sp_buf_str(&b, "#define ");
    sp_buf_add(&b, az->contents + e->begin, e->end - e->begin);
    sp_buf_str(&b, e->macro ? "\n" : ";\n");
  }
  free(l.v);
  return sp_buf_take(&b);
}

/* ---- data clause sections ------------------------------------------------------------------ */

typedef struct sp_eval_ctx {
  bool found;
  int64_t value;
} sp_eval_ctx;

static enum CXChildVisitResult sp_find_len(CXCursor c, CXCursor parent, CXClientData d) {
  sp_eval_ctx *e = d;
  if (clang_getCursorKind(c) != CXCursor_VarDecl) return CXChildVisit_Continue;
  CXString s = clang_getCursorSpelling(c);
  bool mine = strcmp(clang_getCString(s), "sp_section_length") == 0;
  clang_disposeString(s);
  if (!mine) return CXChildVisit_Continue;
  CXCursor kids[4];
  int n = sp_children(c, kids, 4);
  for (int i = (n < 4 ? n : 4) - 1; i >= 0 && !e->found; i--) {
    if (!clang_isExpression(clang_getCursorKind(kids[i]))) continue;
    CXEvalResult r = clang_Cursor_Evaluate(kids[i]);
    if (r && clang_EvalResult_getKind(r) == CXEval_Int) {
      e->value = clang_EvalResult_getAsLongLong(r);
      e->found = true;
    }
    if (r) clang_EvalResult_dispose(r);
    break;
  }
  return CXChildVisit_Break;
}

/* Value of an integer expression written in a clause, with the file's macros and types and the
 * --param values in scope: a small translation unit of its own. -1 when it does not fold. */
static int64_t sp_eval_text(sp_az *az, const char *expr) {
  char *end;
  long long lit = strtoll(expr, &end, 10);
  while (isspace((unsigned char)*end)) end++;
  if (end != expr && !*end) return lit; /* a number needs no parsing */
  sp_buf b = {0};
  sp_buf_str(&b, az->prelude ? az->prelude : "");
  for (int i = 0; i < az->opt->nparams; i++) {
    char line[160];
    snprintf(line, sizeof line, "static const long long %s = %lld;\n", az->opt->params[i].name,
             (long long)az->opt->params[i].value);
    sp_buf_str(&b, line);
  }
  sp_buf_str(&b, "long long sp_section_length = (");
  sp_buf_str(&b, expr);
  sp_buf_str(&b, ");\n");
  char *text = sp_buf_take(&b);
  sp_eval_ctx e = {false, -1};
  CXIndex index = clang_createIndex(0, 0);
  struct CXUnsavedFile f = {"sp_section.c", text, (unsigned long)strlen(text)};
  const char *args[] = {"-xc"};
  CXTranslationUnit tu = NULL;
  if (clang_parseTranslationUnit2(index, "sp_section.c", args, 1, &f, 1, 0, &tu) ==
          CXError_Success && tu) {
    clang_visitChildren(clang_getTranslationUnitCursor(tu), sp_find_len, &e);
    clang_disposeTranslationUnit(tu);
  }
  clang_disposeIndex(index);
  free(text);
  return e.found ? e.value : -1;
}

/* (walk.h) */
int sp_section_extents(sp_az *az, const char *directive, const char *name, int64_t *ext, int max) {
  if (!directive) return -1;
  size_t len = strlen(name);
  for (const char *p = strstr(directive, name); p; p = strstr(p + 1, name)) {
    const char *q = p + len;
    while (*q == ' ') q++;
    bool start = p > directive && (p[-1] == '(' || p[-1] == ',' || p[-1] == ' ');
    if (!start || *q != '[') continue;
    int dims = 0;
    while (*q == '[') {
      const char *close = strchr(q, ']'), *colon = strchr(q, ':');
      if (!close || !colon || colon > close || dims == max) return -1;
      char *lo = strndup(q + 1, (size_t)(colon - q - 1)), *ln = strndup(colon + 1, (size_t)(close - colon - 1));
      int64_t l = lo && lo[strspn(lo, " ")] ? sp_eval_text(az, lo) : 0, n = ln ? sp_eval_text(az, ln) : -1;
      free(lo);
      free(ln);
      if (l < 0 || n <= 0 || __builtin_add_overflow(l, n, &n)) return -1;
      ext[dims++] = n;
      q = close + 1;
      while (*q == ' ') q++;
    }
    return dims;
  }
  return -1;
}

int64_t sp_section_elements(sp_az *az, const char *directive, const char *name) {
  int64_t ext[SP_MAX_LOOPS], total = 1;
  int dims = sp_section_extents(az, directive, name, ext, SP_MAX_LOOPS);
  if (dims < 0) return -1;
  for (int d = 0; d < dims; d++)
    if (__builtin_mul_overflow(total, ext[d], &total)) return -1;
  return total;
}

/* ---- variables --------------------------------------------------------------------------------- */

typedef struct sp_cg_walk {
  sp_nb *nb;
  sp_codegen *cg;
  CXCursor *decls; /* parallel to cg->vars */
  unsigned top_begin, top_end;
  int nband;
} sp_cg_walk;

static void sp_cg_fail(sp_cg_walk *w, CXCursor at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sp_cg_fail(sp_cg_walk *w, CXCursor at, const char *fmt, ...) {
  if (w->cg->not_generated) return;
  va_list ap;
  va_start(ap, fmt);
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  w->cg->not_generated = strdup(msg);
  unsigned line = 0, col = 0;
  if (!clang_Cursor_isNull(at)) sp_cursor_loc(at, &line, &col, NULL);
  w->cg->not_generated_loc = (sp_srcloc){w->nb->az->filename, line, col};
}

static bool sp_declared_inside(const sp_cg_walk *w, CXCursor decl) {
  CXFile f;
  unsigned off;
  clang_getExpansionLocation(clang_getCursorLocation(decl), &f, NULL, NULL, &off);
  return f && clang_File_isEqual(f, w->nb->az->file) && off >= w->top_begin && off < w->top_end;
}

static int sp_cg_var_of(sp_cg_walk *w, CXCursor decl) {
  for (int i = 0; i < w->cg->nvars; i++)
    if (clang_equalCursors(w->decls[i], decl)) return i;
  return -1;
}

static void sp_cg_add_var(sp_cg_walk *w, CXCursor decl) {
  for (int k = 0; k < w->nband; k++)
    if (clang_equalCursors(w->nb->loopvar[k], decl)) return;
  if (sp_declared_inside(w, decl) || sp_cg_var_of(w, decl) >= 0) return;
  sp_codegen *cg = w->cg;
  sp_cg_var *v = realloc(cg->vars, (size_t)(cg->nvars + 1) * sizeof *v);
  CXCursor *d = realloc(w->decls, (size_t)(cg->nvars + 1) * sizeof *d);
  if (v) cg->vars = v;
  if (d) w->decls = d;
  if (!v || !d) return;
  memset(&cg->vars[cg->nvars], 0, sizeof *v);
  CXString s = clang_getCursorSpelling(decl);
  cg->vars[cg->nvars].name = strdup(clang_getCString(s));
  clang_disposeString(s);
  cg->vars[cg->nvars].array = -1;
  w->decls[cg->nvars] = decl;
  cg->nvars++;
}

static bool sp_user_function(CXCursor fn) {
  CXSourceLocation loc = clang_getCursorLocation(fn);
  CXFile f;
  clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
  return f && !clang_Location_isInSystemHeader(loc);
}

static enum CXChildVisitResult sp_cg_visit(CXCursor c, CXCursor parent, CXClientData d) {
  sp_cg_walk *w = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_DeclRefExpr) {
    CXCursor decl = clang_getCursorReferenced(c);
    enum CXCursorKind dk = clang_getCursorKind(decl);
    if (dk == CXCursor_VarDecl || dk == CXCursor_ParmDecl) sp_cg_add_var(w, decl);
  } else if (k == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorReferenced(c);
    if (clang_getCursorKind(fn) == CXCursor_FunctionDecl && sp_user_function(fn)) {
      CXString s = clang_getCursorSpelling(fn);
      sp_cg_fail(w, c, "calls '%s', a function of the program: the generated kernel cannot call "
                 "host code (inline it into the loop body)", clang_getCString(s));
      clang_disposeString(s);
    }
  }
  return CXChildVisit_Recurse;
}

/* One clause "op:list". */
static const char *sp_reduction_op1(const char *clause, const char *name, char *op, size_t n) {
  const char *colon = strchr(clause, ':');
  if (!colon) return NULL;
  size_t len = strlen(name);
  for (const char *p = strstr(colon + 1, name); p; p = strstr(p + 1, name)) {
    bool start = !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    bool end = !(isalnum((unsigned char)p[len]) || p[len] == '_');
    if (start && end) {
      const char *s = clause;
      while (isspace((unsigned char)*s)) s++;
      size_t m = (size_t)(colon - s);
      while (m && isspace((unsigned char)s[m - 1])) m--;
      snprintf(op, n, "%.*s", (int)m, s);
      return op;
    }
  }
  return NULL;
}

/* The operator of the reduction clause naming `name` ("+:a,b; max:c" -> "+" for b), or NULL. */
static const char *sp_reduction_op(const char *clauses, const char *name, char *op, size_t n) {
  for (const char *clause = clauses; clause && *clause;) {
    const char *semi = strchr(clause, ';');
    char *one = semi ? strndup(clause, (size_t)(semi - clause)) : strdup(clause);
    const char *found = one ? sp_reduction_op1(one, name, op, n) : NULL;
    free(one);
    if (found) return found;
    clause = semi ? semi + 1 : NULL;
  }
  return NULL;
}

static bool sp_eval_number(CXCursor e, double *out) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return false;
  bool ok = true;
  switch (clang_EvalResult_getKind(r)) {
    case CXEval_Int:
      *out = clang_EvalResult_isUnsignedInt(r) ? (double)clang_EvalResult_getAsUnsigned(r)
                                               : (double)clang_EvalResult_getAsLongLong(r);
      break;
    case CXEval_Float: *out = clang_EvalResult_getAsDouble(r); break;
    default: ok = false;
  }
  clang_EvalResult_dispose(r);
  return ok;
}

/* A scalar's value: --param, an enclosing host loop's first value, a foldable initializer. */
static bool sp_scalar_value(sp_cg_walk *w, CXCursor decl, const char *name, double *value) {
  sp_az *az = w->nb->az;
  int64_t v;
  if (sp_lookup_param(az, name, &v)) {
    *value = (double)v;
    return true;
  }
  for (int i = az->nhost - 1; i >= 0; i--)
    if (clang_equalCursors(az->host[i].var, decl)) {
      *value = (double)az->host[i].first;
      return az->host[i].known;
    }
  if (clang_getCursorKind(decl) != CXCursor_VarDecl) return false;
  CXCursor kids[8];
  int n = sp_children(decl, kids, 8);
  for (int i = (n < 8 ? n : 8) - 1; i >= 0; i--)
    if (clang_isExpression(clang_getCursorKind(kids[i]))) return sp_eval_number(kids[i], value);
  return false;
}

/* Whether `name` is in a private clause of the construct or of a band loop. */
static bool sp_named_private(const sp_cg_walk *w, const char *name) {
  const sp_nest *n = w->nb->nest;
  const char *lists[SP_MAX_LOOPS + 1];
  int nl = 0;
  lists[nl++] = n->construct_clauses.private_vars;
  for (int k = 0; k < w->nband; k++) lists[nl++] = n->loops[k].clauses.private_vars;
  size_t len = strlen(name);
  for (int l = 0; l < nl; l++)
    for (const char *p = lists[l] ? strstr(lists[l], name) : NULL; p; p = strstr(p + 1, name)) {
      bool start = p == lists[l] || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
      if (start && !(isalnum((unsigned char)p[len]) || p[len] == '_')) return true;
    }
  return false;
}

/* A fixed-size array named in a private clause: a local array of each iteration. */
static bool sp_private_array(sp_cg_walk *w, sp_cg_var *v, CXCursor decl) {
  CXType t = clang_getCursorType(decl);
  if (t.kind != CXType_ConstantArray || !sp_named_private(w, v->name)) return false;
  sp_buf shape = {0};
  while (t.kind == CXType_ConstantArray) {
    char num[32];
    snprintf(num, sizeof num, "[%lld]", (long long)clang_getArraySize(t));
    sp_buf_str(&shape, num);
    t = clang_getArrayElementType(t);
  }
  v->kind = SP_CG_PRIVATE;
  v->shape = sp_buf_take(&shape);
  v->type = sp_cg_type_name(t);
  v->elem_size = clang_Type_getSizeOf(t);
  for (int a = 0; a < w->nb->nest->narrays; a++)
    if (clang_equalCursors(w->nb->array_decl[a], decl)) v->array = a;
  return true;
}

static void sp_classify(sp_cg_walk *w, int i) {
  sp_nb *nb = w->nb;
  sp_nest *n = nb->nest;
  sp_cg_var *v = &w->cg->vars[i];
  CXCursor decl = w->decls[i];
  CXType t = clang_getCursorType(decl);
  if (sp_private_array(w, v, decl)) return;
  if (sp_type_arrayish(t)) {
    v->kind = SP_CG_ARRAY;
    for (int a = 0; a < n->narrays; a++)
      if (clang_equalCursors(nb->array_decl[a], decl)) v->array = a;
    /* the element type: every pointer / array level peeled, typedef names kept */
    CXType e = t;
    for (int guard = 0; guard < SP_MAX_LOOPS + 1; guard++) {
      CXType c = clang_getCanonicalType(e);
      if (c.kind == CXType_Pointer) e = clang_getPointeeType(e);
      else if (sp_type_arrayish(e)) e = clang_getArrayElementType(e);
      else break;
      if (e.kind == CXType_Invalid) break;
    }
    v->type = sp_cg_type_name(e);
    v->floating = sp_type_floating(e);
    v->is_integer = sp_type_integer(e);
    v->elem_size = clang_Type_getSizeOf(e);
    if (v->elem_size <= 0) {
      sp_cg_fail(w, decl, "the elements of '%s' have no size the analyzer knows", v->name);
      return;
    }
    /* where the model has no declared size, a data clause section may give one */
    int64_t sec = -1;
    if (v->array < 0 || n->arrays[v->array].size_from_access) {
      sec = sp_section_elements(nb->az, n->construct_clauses.directive, v->name);
      for (int k = 0; k < n->nloops && sec < 0; k++)
        sec = sp_section_elements(nb->az, n->loops[k].clauses.directive, v->name);
      if (sec > 0 && __builtin_mul_overflow(sec, v->elem_size, &sec)) sec = -1;
    }
    if (v->array < 0) {
      if (sec <= 0)
        sp_cg_fail(w, decl, "'%s' is used only through pointers derived from it in the loop body "
                   "and no data clause gives its size: add one (e.g. present(%s[0:n]))", v->name,
                   v->name);
      v->bytes = sec;
      v->shape = strdup("");
      return;
    }
    const sp_array *arr = &n->arrays[v->array];
    v->bytes = arr->total_bytes;
    if (sec > v->bytes) v->bytes = sec;
    sp_buf shape = {0};
    for (int d = 1; d < arr->ndims; d++) {
      if (arr->dims[d] < 0) {
        sp_cg_fail(w, decl, "array '%s' has an inner extent the analyzer does not know", v->name);
        break;
      }
      char num[32];
      snprintf(num, sizeof num, "[%lld]", (long long)arr->dims[d]);
      sp_buf_str(&shape, num);
    }
    v->shape = sp_buf_take(&shape);
    return;
  }
  v->type = sp_cg_type_name(t);
  v->floating = sp_type_floating(t);
  v->is_integer = sp_type_integer(t);
  v->elem_size = clang_Type_getSizeOf(t);
  bool written = false, read_first = false, seen = false;
  for (int e = 0; e < nb->nevents; e++)
    if (clang_equalCursors(nb->events[e].decl, decl)) {
      if (!seen) read_first = nb->events[e].read;
      seen = true;
      written |= nb->events[e].write;
    }
  for (int k = w->nband; k < n->nloops; k++)
    if (clang_equalCursors(nb->loopvar[k], decl)) {
      written = true;
      if (!seen) read_first = false;
      seen = true;
    }
  if (!v->floating && !v->is_integer) {
    sp_cg_fail(w, decl, "'%s' is a %s variable from outside the nest: only numbers can be kernel "
               "parameters", v->name, v->type);
    return;
  }
  v->value_known = sp_scalar_value(w, decl, v->name, &v->value);
  if (!v->value_known) v->value = v->floating ? 1.5 : 1;
  if (!written) {
    v->kind = SP_CG_SCALAR;
    return;
  }
  char op[16];
  const char *found = sp_reduction_op(n->construct_clauses.reduction, v->name, op, sizeof op);
  for (int k = 0; k < w->nband && !found; k++)
    found = sp_reduction_op(n->loops[k].clauses.reduction, v->name, op, sizeof op);
  if (!found) {
    v->kind = SP_CG_PRIVATE;
    v->read_first = read_first;
    return;
  }
  v->kind = SP_CG_REDUCTION;
  if (strcmp(op, "+") && strcmp(op, "*") && strcmp(op, "max") && strcmp(op, "min")) {
    sp_cg_fail(w, decl, "reduction(%s:%s): only +, *, max and min reductions are generated", op,
               v->name);
    return;
  }
  snprintf(v->op, sizeof v->op, "%.3s", op);
}

/* Integer arrays used directly as a subscript (x[col[j]]) get the size of the array they index,
 * so the runner can fill them with valid indices; other subscripts loaded from memory cannot be
 * bounded. */
static enum CXChildVisitResult sp_cg_subscripts(CXCursor c, CXCursor parent, CXClientData d) {
  sp_cg_walk *w = d;
  if (clang_getCursorKind(c) != CXCursor_ArraySubscriptExpr) return CXChildVisit_Recurse;
  CXCursor kids[2];
  if (sp_children(c, kids, 2) != 2) return CXChildVisit_Recurse;
  CXCursor base = sp_strip(kids[0]), idx = sp_strip(kids[1]);
  if (!sp_type_arrayish(clang_getCursorType(base))) { /* 3[a] */
    CXCursor t = base;
    base = idx;
    idx = t;
  }
  int level = 0;
  while (clang_getCursorKind(base) == CXCursor_ArraySubscriptExpr) {
    CXCursor bk[2];
    if (sp_children(base, bk, 2) != 2) break;
    base = sp_strip(bk[0]);
    level++;
  }
  if (clang_getCursorKind(idx) != CXCursor_ArraySubscriptExpr) return CXChildVisit_Recurse;
  CXCursor ik[2];
  if (sp_children(idx, ik, 2) != 2) return CXChildVisit_Recurse;
  CXCursor ibase = sp_strip(ik[0]);
  if (clang_getCursorKind(base) != CXCursor_DeclRefExpr ||
      clang_getCursorKind(ibase) != CXCursor_DeclRefExpr)
    return CXChildVisit_Recurse;
  int outer = sp_cg_var_of(w, clang_getCursorReferenced(base));
  int inner = sp_cg_var_of(w, clang_getCursorReferenced(ibase));
  if (outer < 0 || inner < 0 || w->cg->vars[outer].array < 0) return CXChildVisit_Recurse;
  const sp_array *arr = &w->nb->nest->arrays[w->cg->vars[outer].array];
  int64_t bound = -1;
  if (level < arr->ndims && arr->dims[level] > 0) bound = arr->dims[level];
  else if (arr->ndims == 1 && w->cg->vars[outer].bytes > arr->total_bytes)
    bound = w->cg->vars[outer].bytes / w->cg->vars[outer].elem_size; /* from a data clause */
  else if (arr->ndims == 1 && !arr->size_from_access) bound = arr->total_bytes / arr->elem_size;
  if (bound <= 0) return CXChildVisit_Recurse;
  sp_cg_var *iv = &w->cg->vars[inner];
  if (iv->index_bound == 0 || bound < iv->index_bound) iv->index_bound = bound;
  return CXChildVisit_Recurse;
}

void sp_codegen_collect(sp_nb *nb, CXCursor top) {
  sp_nest *n = nb->nest;
  sp_codegen *cg = calloc(1, sizeof *cg);
  if (!cg) return;
  n->codegen = cg;
  sp_cg_walk w = {nb, cg, NULL, 0, 0, 0};
  sp_cursor_range(top, &w.top_begin, &w.top_end);
  w.nband = sp_nest_band_length(n);
  if (w.nband == 0) return;
  sp_az *az = nb->az;
  for (int k = 0; k < w.nband; k++) {
    cg->index_type[k] = sp_cg_type_name(clang_getCursorType(nb->loopvar[k]));
    memcpy(cg->cmp[k], nb->loop_cmp[k], sizeof cg->cmp[k]);
  }
  /* the body as written; a statement's extent stops before its ';' */
  CXCursor body = nb->loop_body[w.nband - 1];
  unsigned b, e;
  sp_cursor_range(body, &b, &e);
  if (e <= az->contents_len && b < e) {
    unsigned s = e;
    while (s < az->contents_len && isspace((unsigned char)az->contents[s])) s++;
    if (s < az->contents_len && az->contents[s] == ';') e = s + 1;
    cg->body = sp_text_without_pragmas(az->contents, b, e);
  } else {
    cg->body = strdup(";");
  }
  cg->prelude = strdup(az->prelude ? az->prelude : "");
  clang_visitChildren(top, sp_cg_visit, &w);
  for (int i = 0; i < cg->nvars; i++) sp_classify(&w, i);
  clang_visitChildren(top, sp_cg_subscripts, &w);
  /* every modeled array is a parameter, or a pointer the body derives from one */
  int *param_of = calloc((size_t)n->narrays + 1, sizeof *param_of);
  for (int a = 0; a < n->narrays && param_of; a++) {
    param_of[a] = -1;
    for (int i = 0; i < cg->nvars; i++)
      if (cg->vars[i].array == a) param_of[a] = i;
    CXCursor d = nb->array_decl[a];
    bool local = !clang_Cursor_isNull(d) && sp_declared_inside(&w, d);
    if (param_of[a] < 0 && !local)
      sp_cg_fail(&w, top, "array '%s' is reached through memory (a pointer stored in a structure "
                 "or an array): the plan cannot allocate it", n->arrays[a].name);
  }
  for (int r = 0; r < n->nrefs && param_of; r++) {
    const sp_ref *ref = &n->refs[r];
    const sp_array *arr = &n->arrays[ref->array];
    int v = param_of[ref->array];
    if (ref->irregular && arr->size_from_access && v >= 0 && cg->vars[v].bytes <= arr->total_bytes)
      sp_cg_fail(&w, top, "%s at %u:%u is not affine and '%s' has no declared size: the plan "
                 "cannot size its allocation (declare its extent, or give a data clause "
                 "section such as copyin(%s[0:n]))", ref->text ? ref->text : "?", ref->loc.line,
                 ref->loc.col, arr->name, arr->name);
  }
  free(param_of);
  free(w.decls);
}
