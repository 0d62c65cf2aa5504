/* Subscripts written through macros, e.g. a[IDX(k, j, i + 1)] with
 *   #define IDX(k, j, i) (((k) * NY + (j)) * NX + (i))
 * libclang 14 reports every location inside a macro expansion at the macro's use (the spelling
 * locations are those of the expansion, and it has no API for an operator's kind), so the
 * operators of the macro body cannot be read and the walker in values.c gives up.
 *
 * The value is found instead by evaluation: the file is parsed again with one probe function per
 * chosen point appended, each declaring the nest's loop indices as enumeration constants (which
 * shadow the real variables; --param values join them) and initializing a constant with the subscript as written, so clang
 * expands the macros and folds the constant. With n loop indices, n + 1 points give a candidate
 * affine form and two more points far from them must agree with it; anything else (a variable
 * that is not a loop index, a division, a call) fails to fold or to agree and the subscript stays
 * irregular, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

#define SP_PROBE_POINTS (SP_MAX_LOOPS + 3)

typedef struct sp_probe_ctx {
  long long value[SP_PROBE_POINTS];
  bool found[SP_PROBE_POINTS];
} sp_probe_ctx;

static enum CXChildVisitResult sp_probe_find(CXCursor c, CXCursor parent, CXClientData d) {
  sp_probe_ctx *ctx = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_FunctionDecl) { /* only the appended probes, not the user's functions */
    CXString name = clang_getCursorSpelling(c);
    bool probe = strncmp(clang_getCString(name), "sp_probe_", 9) == 0;
    clang_disposeString(name);
    return probe ? CXChildVisit_Recurse : CXChildVisit_Continue;
  }
  if (k == CXCursor_CompoundStmt || k == CXCursor_DeclStmt) return CXChildVisit_Recurse;
  if (k != CXCursor_VarDecl) return CXChildVisit_Continue;
  CXString name = clang_getCursorSpelling(c);
  int p = -1;
  if (sscanf(clang_getCString(name), "sp_probe_value_%d", &p) != 1) p = -1;
  clang_disposeString(name);
  if (p < 0 || p >= SP_PROBE_POINTS) return CXChildVisit_Continue;
  CXCursor kids[4];
  int n = sp_children(c, kids, 4);
  if (n < 1) return CXChildVisit_Continue;
  CXEvalResult r = clang_Cursor_Evaluate(kids[n - 1]);
  if (r) {
    if (clang_EvalResult_getKind(r) == CXEval_Int) {
      ctx->value[p] = clang_EvalResult_getAsLongLong(r);
      ctx->found[p] = true;
    }
    clang_EvalResult_dispose(r);
  }
  return CXChildVisit_Continue;
}

/* The indices' values at point p: a base point, the base plus one in each index in turn, and two
 * checks far away in every index at once. */
static long long sp_probe_coord(int p, int k, int n) {
  static const long long base[] = {3, 5, 7, 11, 13, 17, 19, 23};
  static const long long far1[] = {101, 59, 37, 29, 71, 43, 97, 61};
  static const long long far2[] = {1009, 7, 313, 4, 211, 2, 89, 30};
  if (p <= n) return base[k] + (p == k + 1);
  return p == n + 1 ? far1[k] : far2[k];
}

sp_aff_status sp_probe_affine(sp_az *az, sp_nb *nb, CXCursor e, sp_affine *out) {
  int n = nb->nest->nloops;
  if (!az->index || n < 1 || n > 8) return SP_AFF_NONAFFINE; /* sp_probe_coord's 8 points */
  char *text = sp_cursor_text(az, e);
  if (!text || strpbrk(text, ";{}\"'#")) {
    free(text);
    return SP_AFF_NONAFFINE;
  }
  char names[SP_MAX_LOOPS][64];
  for (int k = 0; k < n; k++) {
    CXString s = clang_getCursorSpelling(nb->loopvar[k]);
    snprintf(names[k], sizeof names[k], "%s", clang_getCString(s));
    clang_disposeString(s);
    if (!names[k][0]) {
      free(text);
      return SP_AFF_NONAFFINE;
    }
  }
  int npoints = n + 3;
  size_t per_point = strlen(text) + 128 + 96 * (size_t)n;
  for (int i = 0; i < az->opt->nparams; i++) per_point += strlen(az->opt->params[i].name) + 32;
  size_t cap = az->contents_len + 64 + (size_t)npoints * per_point;
  char *src = malloc(cap);
  if (!src) {
    free(text);
    return SP_AFF_NONAFFINE;
  }
  size_t len = az->contents_len;
  memcpy(src, az->contents, len);
  len += (size_t)snprintf(src + len, cap - len, "\n");
  for (int p = 0; p < npoints; p++) {
    len += (size_t)snprintf(src + len, cap - len, "static void sp_probe_%d(void) { enum { ", p);
    for (int k = 0; k < n; k++)
      len += (size_t)snprintf(src + len, cap - len, "%s%s = %lld", k ? ", " : "", names[k],
                              sp_probe_coord(p, k, n));
    for (int i = 0; i < az->opt->nparams; i++) { /* run-time sizes the user gave */
      bool shadowed = false;
      for (int k = 0; k < n; k++) shadowed |= strcmp(names[k], az->opt->params[i].name) == 0;
      if (!shadowed)
        len += (size_t)snprintf(src + len, cap - len, ", %s = %lld", az->opt->params[i].name,
                                (long long)az->opt->params[i].value);
    }
    len += (size_t)snprintf(src + len, cap - len,
                            " }; static const long long sp_probe_value_%d = (long long)(%s); "
                            "(void)sp_probe_value_%d; }\n",
                            p, text, p);
  }
  free(text);
  CXString fname = clang_getFileName(az->file);
  char *path = strdup(clang_getCString(fname) ? clang_getCString(fname) : az->filename);
  clang_disposeString(fname);
  struct CXUnsavedFile unsaved = {path, src, (unsigned long)len};
  CXTranslationUnit tu = NULL;
  sp_probe_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  if (path && clang_parseTranslationUnit2(az->index, path, az->args, az->nargs, &unsaved, 1,
                                          CXTranslationUnit_KeepGoing, &tu) == CXError_Success &&
      tu) {
    clang_visitChildren(clang_getTranslationUnitCursor(tu), sp_probe_find, &ctx);
    clang_disposeTranslationUnit(tu);
  }
  free(path);
  free(src);
  for (int p = 0; p < npoints; p++)
    if (!ctx.found[p]) return SP_AFF_NONAFFINE;
  sp_affine_zero(out);
  long long c0 = ctx.value[0];
  for (int k = 0; k < n; k++) {
    if (__builtin_sub_overflow(ctx.value[k + 1], ctx.value[0], &out->coef[k]))
      return SP_AFF_NONAFFINE;
    long long term;
    if (__builtin_mul_overflow(out->coef[k], sp_probe_coord(0, k, n), &term) ||
        __builtin_sub_overflow(c0, term, &c0))
      return SP_AFF_NONAFFINE;
  }
  out->constant = c0;
  for (int p = n + 1; p < npoints; p++) {
    long long v = out->constant, term;
    for (int k = 0; k < n; k++)
      if (__builtin_mul_overflow(out->coef[k], sp_probe_coord(p, k, n), &term) ||
          __builtin_add_overflow(v, term, &v))
        return SP_AFF_NONAFFINE;
    if (v != ctx.value[p]) return SP_AFF_NONAFFINE;
  }
  return SP_AFF_OK;
}
