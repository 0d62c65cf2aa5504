/* Integer expressions (libclang cursors) to affine functions of the nest's loop indices, folding
 * literals, macros, enum and const integers, -D definitions and --param values. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

bool sp_cursor_is_null(CXCursor c) { return clang_Cursor_isNull(c); }

typedef struct sp_child_list {
  CXCursor *out;
  int max, n;
} sp_child_list;

static enum CXChildVisitResult sp_collect_child(CXCursor c, CXCursor parent, CXClientData d) {
  sp_child_list *l = d;
  if (l->n < l->max) l->out[l->n] = c;
  l->n++;
  return CXChildVisit_Continue;
}

int sp_children(CXCursor c, CXCursor *out, int max) {
  sp_child_list l = {out, max, 0};
  clang_visitChildren(c, sp_collect_child, &l);
  return l.n;
}

/* Skips parentheses and implicit casts (libclang shows those as UnexposedExpr). */
CXCursor sp_strip(CXCursor c) {
  for (;;) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr) return c;
    CXCursor kids[2];
    if (sp_children(c, kids, 2) != 1) return c;
    c = kids[0];
  }
}

void sp_cursor_loc(CXCursor c, unsigned *line, unsigned *col, unsigned *offset) {
  CXSourceLocation loc = clang_getRangeStart(clang_getCursorExtent(c));
  unsigned l, cc, o;
  clang_getExpansionLocation(loc, NULL, &l, &cc, &o);
  if (line) *line = l;
  if (col) *col = cc;
  if (offset) *offset = o;
}

void sp_cursor_range(CXCursor c, unsigned *begin, unsigned *end) {
  CXSourceRange r = clang_getCursorExtent(c);
  clang_getExpansionLocation(clang_getRangeStart(r), NULL, NULL, NULL, begin);
  clang_getExpansionLocation(clang_getRangeEnd(r), NULL, NULL, NULL, end);
}

size_t sp_word_instead_of_for(const sp_az *az, size_t off, const char **word) {
  if (!az->contents) return 0;
  while (off < az->contents_len && isspace((unsigned char)az->contents[off])) off++;
  const char *p = az->contents + off;
  size_t len = 0;
  while (off + len < az->contents_len && (isalnum((unsigned char)p[len]) || p[len] == '_')) len++;
  *word = p;
  return len == 3 && strncmp(p, "for", 3) == 0 ? 0 : len;
}

char *sp_cursor_text(sp_az *az, CXCursor c) {
  unsigned b, e;
  sp_cursor_range(c, &b, &e);
  if (!az->contents || e > az->contents_len || b > e) return strdup("?");
  char *s = malloc((size_t)(e - b) + 1);
  if (!s) return NULL;
  size_t n = 0;
  bool space = false;
  for (unsigned i = b; i < e; i++) {
    char ch = az->contents[i];
    if (isspace((unsigned char)ch)) {
      space = n > 0;
      continue;
    }
    if (space) s[n++] = ' ';
    space = false;
    s[n++] = ch;
  }
  s[n] = 0;
  return s;
}

/* Tokens of a cursor over its file range: ranges that start or end inside a macro expansion are
 * widened to the macro's use in the file, which clang_tokenize needs. */
static void sp_tokenize_cursor(sp_az *az, CXCursor c, CXToken **toks, unsigned *ntoks) {
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile f;
  unsigned b, e, se;
  clang_getExpansionLocation(clang_getRangeStart(r), &f, NULL, NULL, &b);
  clang_getExpansionLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &e);
  clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &se);
  if (se != e && e < az->contents_len) e++; /* the end is a macro: include its name */
  *toks = NULL;
  *ntoks = 0;
  if (!f || e < b) return;
  CXSourceRange fr = clang_getRange(clang_getLocationForOffset(az->tu, f, b),
                                    clang_getLocationForOffset(az->tu, f, e));
  clang_tokenize(az->tu, fr, toks, ntoks);
}

void sp_operator(sp_az *az, CXCursor c, char *op, size_t n) {
  op[0] = 0;
  CXToken *toks = NULL;
  unsigned ntoks = 0;
  sp_tokenize_cursor(az, c, &toks, &ntoks);
  if (!toks) return;
  enum CXCursorKind k = clang_getCursorKind(c);
  int pick = -1;
  if (k == CXCursor_UnaryOperator) {
    if (ntoks > 0 && clang_getTokenKind(toks[0]) == CXToken_Punctuation) pick = 0;
    else if (ntoks > 0 && clang_getTokenKind(toks[ntoks - 1]) == CXToken_Punctuation)
      pick = (int)ntoks - 1;
  } else {
    CXCursor kids[2];
    if (sp_children(c, kids, 2) == 2) {
      unsigned b0, e0;
      sp_cursor_range(kids[0], &b0, &e0);
      for (unsigned i = 0; i < ntoks; i++) {
        unsigned off;
        clang_getExpansionLocation(clang_getTokenLocation(az->tu, toks[i]), NULL, NULL, NULL,
                                   &off);
        if (off >= e0 && clang_getTokenKind(toks[i]) == CXToken_Punctuation) {
          pick = (int)i;
          break;
        }
      }
    }
  }
  if (pick >= 0) {
    CXString s = clang_getTokenSpelling(az->tu, toks[pick]);
    snprintf(op, n, "%s", clang_getCString(s));
    clang_disposeString(s);
  }
  clang_disposeTokens(az->tu, toks, ntoks);
}

bool sp_lookup_param(sp_az *az, const char *name, int64_t *value) {
  for (int i = az->opt->nparams - 1; i >= 0; i--)
    if (strcmp(az->opt->params[i].name, name) == 0) {
      *value = az->opt->params[i].value;
      return true;
    }
  return false;
}

static sp_aff_status sp_fail(sp_aff_err *err, CXCursor at, sp_aff_status st, const char *fmt,
                             const char *arg) {
  if (err) {
    snprintf(err->why, sizeof err->why, fmt, arg);
    err->at = at;
  }
  return st;
}

static bool sp_is_integer_type(CXType t) {
  t = clang_getCanonicalType(t);
  return (t.kind >= CXType_Bool && t.kind <= CXType_Int128) || t.kind == CXType_Enum;
}

static sp_aff_status sp_declref_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out,
                                       sp_aff_err *err) {
  CXCursor decl = clang_getCursorReferenced(e);
  enum CXCursorKind dk = clang_getCursorKind(decl);
  CXString name_s = clang_getCursorSpelling(decl);
  char name[128];
  snprintf(name, sizeof name, "%s", clang_getCString(name_s));
  clang_disposeString(name_s);
  if (dk == CXCursor_EnumConstantDecl) {
    *out = sp_affine_const(clang_getEnumConstantDeclValue(decl));
    return SP_AFF_OK;
  }
  if (dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl)
    return sp_fail(err, e, SP_AFF_NONAFFINE, "'%s' is not an integer variable", name);
  if (nb) {
    for (int i = nb->nbound - 1; i >= 0; i--) /* the innermost call's parameters first */
      if (clang_equalCursors(nb->bound[i].parm, decl)) {
        *out = nb->bound[i].value;
        return SP_AFF_OK;
      }
    for (int k = 0; k < nb->nest->nloops; k++)
      if (clang_equalCursors(nb->loopvar[k], decl)) {
        sp_affine_zero(out);
        out->coef[k] = 1;
        return SP_AFF_OK;
      }
    const sp_local_value *lv = sp_nb_local(nb, decl);
    if (lv) {
      if (lv->pointer) /* followed as an address (extract.c), never an integer value */
        return sp_fail(err, e, SP_AFF_NONAFFINE, "'%s' is a pointer", name);
      if (!clang_Cursor_isNull(nb->forced_choice) &&
          clang_equalCursors(sp_local_choice(lv), nb->forced_choice) && nb->depth_guard < 64) {
        nb->depth_guard++;
        sp_aff_status st = sp_expr_affine(az, nb, lv->init, out, err);
        nb->depth_guard--;
        return st;
      }
      if (!lv->valid) return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", lv->why);
      *out = lv->value;
      return SP_AFF_OK;
    }
  }
  int64_t v;
  if (sp_lookup_param(az, name, &v)) {
    *out = sp_affine_const(v);
    return SP_AFF_OK;
  }
  for (int i = az->nhost - 1; i >= 0; i--)
    if (clang_equalCursors(az->host[i].var, decl)) {
      if (!az->host[i].known)
        return sp_fail(err, e, SP_AFF_NONAFFINE,
                       "'%s' is the index of an enclosing loop with an unknown start", name);
      *out = sp_affine_const(az->host[i].first);
      return SP_AFF_OK;
    }
  if (!sp_is_integer_type(clang_getCursorType(decl)))
    return sp_fail(err, e, SP_AFF_NONAFFINE, "'%s' is not an integer", name);
  if (dk == CXCursor_VarDecl && clang_isConstQualifiedType(clang_getCursorType(decl)) &&
      (!nb || nb->depth_guard < 64)) {
    CXCursor kids[4];
    int n = sp_children(decl, kids, 4);
    for (int i = n - 1; i >= 0 && i < 4; i--)
      if (clang_isExpression(clang_getCursorKind(kids[i]))) {
        if (nb) nb->depth_guard++;
        sp_aff_status st = sp_expr_affine(az, nb, kids[i], out, err);
        if (nb) nb->depth_guard--;
        if (st == SP_AFF_OK && !sp_affine_is_const(out))
          return sp_fail(err, e, SP_AFF_NONAFFINE, "const '%s' depends on a loop index", name);
        return st;
      }
  }
  if (err) {
    snprintf(err->why, sizeof err->why, "%s", name);
    err->unknown = decl;
    err->at = e;
  }
  return SP_AFF_UNKNOWN;
}

static bool sp_eval_int(CXCursor e, int64_t *v) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return false;
  bool ok = clang_EvalResult_getKind(r) == CXEval_Int;
  if (ok) {
    if (clang_EvalResult_isUnsignedInt(r)) {
      unsigned long long u = clang_EvalResult_getAsUnsigned(r);
      ok = u <= INT64_MAX;
      *v = (int64_t)u;
    } else {
      *v = clang_EvalResult_getAsLongLong(r);
    }
  }
  clang_EvalResult_dispose(r);
  return ok;
}

/* A call of a function of the program whose body is `return EXPR;` with integer parameters (an
 * index helper, `static inline int idx(int i, int j) { return i * N + j; }`): EXPR with each
 * parameter bound to its argument's affine form, as the compiler inlines it. */
static sp_aff_status sp_call_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out,
                                    sp_aff_err *err) {
  static const char call[] = "call of a function that is not 'return <integer expression>;'";
  CXCursor def = clang_getCursorDefinition(clang_getCursorReferenced(e));
  if (!nb || nb->depth_guard >= 64 || clang_getCursorKind(def) != CXCursor_FunctionDecl ||
      !sp_is_integer_type(clang_getCursorResultType(def)))
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", call);
  const int nargs = clang_Cursor_getNumArguments(e);
  if (nargs < 0 || nargs != clang_Cursor_getNumArguments(def) || nargs > 16)
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", call);
  CXCursor kids[20], ret[2], expr[2];
  int nk = sp_children(def, kids, 20);
  if (nk < 1 || nk > 20 || clang_getCursorKind(kids[nk - 1]) != CXCursor_CompoundStmt ||
      sp_children(kids[nk - 1], ret, 2) != 1 || clang_getCursorKind(ret[0]) != CXCursor_ReturnStmt ||
      sp_children(ret[0], expr, 2) != 1)
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", call);
  if (nb->nbound + nargs > (int)(sizeof nb->bound / sizeof nb->bound[0]))
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "calls nested too deeply");
  sp_bound_parm bound[16];
  for (int i = 0; i < nargs; i++) {
    bound[i].parm = clang_Cursor_getArgument(def, (unsigned)i);
    if (!sp_is_integer_type(clang_getCursorType(bound[i].parm)))
      return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", call);
    sp_aff_status st = sp_expr_affine(az, nb, clang_Cursor_getArgument(e, (unsigned)i),
                                      &bound[i].value, err);
    if (st != SP_AFF_OK) return st;
  }
  const int saved = nb->nbound;
  memcpy(nb->bound + saved, bound, sizeof *bound * (size_t)nargs);
  nb->nbound = saved + nargs;
  nb->depth_guard++;
  sp_aff_status st = sp_expr_affine(az, nb, expr[0], out, err);
  nb->depth_guard--;
  nb->nbound = saved;
  return st;
}

sp_aff_status sp_expr_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out, sp_aff_err *err) {
  e = sp_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  int64_t v;
  if (k == CXCursor_DeclRefExpr) return sp_declref_affine(az, nb, e, out, err);
  if (k == CXCursor_IntegerLiteral || k == CXCursor_CharacterLiteral || k == CXCursor_UnaryExpr) {
    if (sp_eval_int(e, &v)) {
      *out = sp_affine_const(v);
      return SP_AFF_OK;
    }
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "constant could not be evaluated");
  }
  if (k != CXCursor_CStyleCastExpr && sp_is_integer_type(clang_getCursorType(e)) &&
      sp_eval_int(e, &v)) {
    *out = sp_affine_const(v);
    return SP_AFF_OK;
  }
  CXCursor kids[3];
  int nk = sp_children(e, kids, 3);
  if (k == CXCursor_CStyleCastExpr && nk >= 1) {
    if (!sp_is_integer_type(clang_getCursorType(e)))
      return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "cast to a non-integer type");
    return sp_expr_affine(az, nb, kids[nk - 1], out, err);
  }
  if (k == CXCursor_UnaryOperator && nk == 1) {
    char op[8];
    sp_operator(az, e, op, sizeof op);
    sp_aff_status st = sp_expr_affine(az, nb, kids[0], out, err);
    if (st != SP_AFF_OK) return st;
    if (strcmp(op, "+") == 0) return SP_AFF_OK;
    if (strcmp(op, "-") == 0)
      return sp_affine_scale(out, out, -1) ? SP_AFF_OK
                                           : sp_fail(err, e, SP_AFF_OVERFLOW, "%s", "negation");
    return sp_fail(err, e, SP_AFF_NONAFFINE, "operator '%s'", op);
  }
  if (k == CXCursor_BinaryOperator && nk == 2) {
    char op[8];
    sp_operator(az, e, op, sizeof op);
    sp_affine a, b;
    sp_aff_status st = sp_expr_affine(az, nb, kids[0], &a, err);
    if (st != SP_AFF_OK) return st;
    st = sp_expr_affine(az, nb, kids[1], &b, err);
    if (st != SP_AFF_OK) return st;
    bool ok = true;
    if (strcmp(op, "+") == 0) {
      ok = sp_affine_add(out, &a, &b);
    } else if (strcmp(op, "-") == 0) {
      ok = sp_affine_sub(out, &a, &b);
    } else if (strcmp(op, "*") == 0) {
      if (sp_affine_is_const(&a)) ok = sp_affine_scale(out, &b, a.constant);
      else if (sp_affine_is_const(&b)) ok = sp_affine_scale(out, &a, b.constant);
      else return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "product of two loop-dependent terms");
    } else if (strcmp(op, "<<") == 0 && sp_affine_is_const(&b) && b.constant >= 0 &&
               b.constant < 63) {
      ok = sp_affine_scale(out, &a, (int64_t)1 << b.constant);
    } else if (sp_affine_is_const(&a) && sp_affine_is_const(&b)) {
      int64_t x = a.constant, y = b.constant;
      if ((strcmp(op, "/") == 0 || strcmp(op, "%") == 0) && y == 0)
        return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "division by zero");
      if (strcmp(op, "/") == 0 && !(x == INT64_MIN && y == -1)) v = x / y;
      else if (strcmp(op, "%") == 0 && !(x == INT64_MIN && y == -1)) v = x % y;
      else if (strcmp(op, ">>") == 0 && y >= 0 && y < 63) v = x >> y;
      else if (strcmp(op, "&") == 0) v = x & y;
      else if (strcmp(op, "|") == 0) v = x | y;
      else if (strcmp(op, "^") == 0) v = x ^ y;
      else return sp_fail(err, e, SP_AFF_NONAFFINE, "operator '%s'", op);
      *out = sp_affine_const(v);
    } else {
      return sp_fail(err, e, SP_AFF_NONAFFINE, "operator '%s' on a loop-dependent term",
                     op[0] ? op : "?");
    }
    return ok ? SP_AFF_OK : sp_fail(err, e, SP_AFF_OVERFLOW, "%s", "64-bit overflow");
  }
  if (k == CXCursor_ConditionalOperator && nk == 3) {
    if (nb && !clang_Cursor_isNull(nb->forced_choice) && clang_equalCursors(e, nb->forced_choice))
      return sp_expr_affine(az, nb, kids[nb->forced_branch ? 2 : 1], out, err);
    sp_affine c;
    if (sp_expr_affine(az, nb, kids[0], &c, NULL) == SP_AFF_OK && sp_affine_is_const(&c))
      return sp_expr_affine(az, nb, kids[c.constant ? 1 : 2], out, err);
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "conditional expression");
  }
  if (sp_is_integer_type(clang_getCursorType(e)) && sp_eval_int(e, &v)) {
    *out = sp_affine_const(v);
    return SP_AFF_OK;
  }
  if (k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr)
    return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "value loaded from memory");
  if (k == CXCursor_CallExpr) return sp_call_affine(az, nb, e, out, err);
  return sp_fail(err, e, SP_AFF_NONAFFINE, "%s", "not an integer expression");
}

void sp_report_value_error(sp_az *az, sp_aff_status st, const sp_aff_err *err, const char *what) {
  unsigned line, col;
  sp_cursor_loc(err->at, &line, &col, NULL);
  if (st == SP_AFF_UNKNOWN) {
    unsigned dl = 0, dc = 0;
    if (!clang_Cursor_isNull(err->unknown)) sp_cursor_loc(err->unknown, &dl, &dc, NULL);
    sp_diag_report(az->diag, SP_ERROR, az->filename, line, col,
                   "%s needs the value of '%s' (declared at line %u:%u), which is not a "
                   "compile-time constant; give it with --param %s=VALUE",
                   what, err->why, dl, dc, err->why);
    if (az->status < SP_EXIT_VALUE) az->status = SP_EXIT_VALUE;
  } else if (st == SP_AFF_OVERFLOW) {
    sp_diag_report(az->diag, SP_ERROR, az->filename, line, col,
                   "%s overflows 64-bit arithmetic (%s); check the sizes given with --param "
                   "or -D",
                   what, err->why);
    if (az->status < SP_EXIT_VALUE) az->status = SP_EXIT_VALUE;
  }
}
