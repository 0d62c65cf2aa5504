/* The floating-point work of each loop body (sp_fp_work, ir.h): what the time model needs to
 * charge arithmetic, which the memory trace does not see. One walk of each loop's body
 * statements, nested loops left to their own walk. Each expression yields the operations on its
 * longest dependent chain; a scalar assigned in the body carries its value's chain to its uses
 * later in the same iteration. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

/* Weights that pick the longest chain: a division, square root or special function takes about
 * twelve times a multiply-add's latency in a dependent chain on the H200, in double and in
 * float alike (validation/results/h200/2026-11-29-fp-op-probe). The chain's counts, not these
 * weights, go to the time model, which applies the arch's latencies. */
static const double sp_fp_chain_weight[SP_FP_KINDS] = {1, 12, 12, 12, 1, 12, 12, 12};

typedef struct sp_fp_path {
  double weight;
  double count[SP_FP_KINDS];
} sp_fp_path;

#define SP_ARITH_MAX_VARS 128

typedef struct sp_arith {
  sp_az *az;
  sp_fp_work *out;
  CXCursor var[SP_ARITH_MAX_VARS]; /* scalars assigned in this iteration, and their chains */
  sp_fp_path var_path[SP_ARITH_MAX_VARS];
  int nvars;
  sp_fp_path longest;
  int depth;
} sp_arith;

const char *sp_fp_kind_name(sp_fp_kind k) {
  static const char *const names[SP_FP_KINDS] = {"fp64",     "fp64_div", "fp64_sqrt",
                                                 "fp64_special", "fp32", "fp32_div",
                                                 "fp32_sqrt", "fp32_special"};
  return k >= 0 && k < SP_FP_KINDS ? names[k] : "?";
}

/* 0 for a type that is not floating, 64 for double (and long double), 32 for float. */
static int sp_fp_bits(CXType t) {
  switch (clang_getCanonicalType(t).kind) {
    case CXType_Float: return 32;
    case CXType_Double:
    case CXType_LongDouble: return 64;
    default: return 0;
  }
}

static sp_fp_kind sp_fp_kind_of(int bits, sp_fp_kind kind64) {
  return bits == 32 ? (sp_fp_kind)(kind64 + SP_FP32_SIMPLE) : kind64;
}

static void sp_path_max(sp_fp_path *a, const sp_fp_path *b) {
  if (b->weight > a->weight) *a = *b;
}

/* One operation of kind k on top of chain p, counted n times. */
static void sp_arith_op(sp_arith *ar, sp_fp_path *p, sp_fp_kind k, double n) {
  ar->out->ops[k] += n;
  p->weight += n * sp_fp_chain_weight[k];
  p->count[k] += n;
  sp_path_max(&ar->longest, p);
}

static int sp_arith_var_index(const sp_arith *ar, CXCursor decl) {
  for (int i = ar->nvars - 1; i >= 0; i--)
    if (clang_equalCursors(ar->var[i], decl)) return i;
  return -1;
}

/* Records that scalar `decl` now holds a value whose chain is p. */
static void sp_arith_assign(sp_arith *ar, CXCursor decl, const sp_fp_path *p) {
  int i = sp_arith_var_index(ar, decl);
  if (i < 0) {
    if (ar->nvars == SP_ARITH_MAX_VARS) return; /* later values start chains of their own */
    i = ar->nvars++;
    ar->var[i] = decl;
  }
  ar->var_path[i] = *p;
}

/* The scalar variable an lvalue names, or a null cursor (an array element, a field). */
static CXCursor sp_arith_scalar(CXCursor lvalue) {
  CXCursor s = sp_strip(lvalue);
  if (clang_getCursorKind(s) != CXCursor_DeclRefExpr) return clang_getNullCursor();
  CXCursor d = clang_getCursorReferenced(s);
  return clang_getCursorKind(d) == CXCursor_VarDecl ? d : clang_getNullCursor();
}

static sp_fp_path sp_arith_expr(sp_arith *ar, CXCursor e);

/* Math library functions by the work one call does. */
static int sp_call_kind(const char *name, int bits, sp_fp_kind *k, double *n) {
  static const char *const simple[] = {"fabs", "fmin", "fmax", "fma", "floor", "ceil", "trunc",
                                       "round", "rint", "copysign", "fdim"};
  static const char *const special[] = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                                        "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                                        "sinh", "cosh", "tanh", "erf", "erfc", "cbrt", "hypot"};
  char base[32];
  size_t len = strlen(name);
  if (len == 0 || len >= sizeof base) return 0;
  memcpy(base, name, len + 1);
  if (bits == 32 && len > 1 && base[len - 1] == 'f') base[len - 1] = '\0';
  *n = 1;
  if (strcmp(base, "sqrt") == 0 || strcmp(base, "rsqrt") == 0) {
    *k = sp_fp_kind_of(bits, SP_FP64_SQRT);
    return 1;
  }
  if (strcmp(base, "pow") == 0) { /* a logarithm and an exponential */
    *k = sp_fp_kind_of(bits, SP_FP64_SPECIAL);
    *n = 2;
    return 1;
  }
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    if (strcmp(base, special[i]) == 0) {
      *k = sp_fp_kind_of(bits, SP_FP64_SPECIAL);
      return 1;
    }
  for (size_t i = 0; i < sizeof simple / sizeof *simple; i++)
    if (strcmp(base, simple[i]) == 0) {
      *k = sp_fp_kind_of(bits, SP_FP64_SIMPLE);
      return 1;
    }
  return 0;
}

static sp_fp_path sp_arith_call(sp_arith *ar, CXCursor call) {
  sp_fp_path p;
  memset(&p, 0, sizeof p);
  int nargs = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < nargs; i++) {
    sp_fp_path a = sp_arith_expr(ar, clang_Cursor_getArgument(call, (unsigned)i));
    sp_path_max(&p, &a);
  }
  int bits = sp_fp_bits(clang_getCursorType(call));
  if (!bits) return p;
  CXString s = clang_getCursorSpelling(call);
  sp_fp_kind k;
  double n;
  if (sp_call_kind(clang_getCString(s), bits, &k, &n)) sp_arith_op(ar, &p, k, n);
  clang_disposeString(s);
  return p;
}

/* Whether e (stripped) is a floating multiply, which an add or subtract fuses with. */
static bool sp_is_fp_mul(sp_az *az, CXCursor e, CXCursor kids[2]) {
  CXCursor s = sp_strip(e);
  if (clang_getCursorKind(s) != CXCursor_BinaryOperator || !sp_fp_bits(clang_getCursorType(s)))
    return false;
  char op[8];
  sp_operator(az, s, op, sizeof op);
  return strcmp(op, "*") == 0 && sp_children(s, kids, 2) == 2;
}

/* The chain of operand e. Where `fuse` and e is a floating multiply, the chain of its operands:
 * the add or subtract that takes it is then one fused multiply-add (*fused set). */
static sp_fp_path sp_arith_operand(sp_arith *ar, CXCursor e, bool fuse, bool *fused) {
  CXCursor mul[2];
  *fused = fuse && sp_is_fp_mul(ar->az, e, mul);
  if (!*fused) return sp_arith_expr(ar, e);
  sp_fp_path p = sp_arith_expr(ar, mul[0]), q = sp_arith_expr(ar, mul[1]);
  sp_path_max(&p, &q);
  return p;
}

/* Operands a op b of a floating binary operator or compound assignment (a_path: the target's
 * chain, a not evaluated): their chains, at most one multiply fused into an add or subtract,
 * and the operation on top. */
static sp_fp_path sp_arith_binary(sp_arith *ar, const char *op, CXCursor a, CXCursor b, int bits,
                                  const sp_fp_path *a_path) {
  bool additive = strcmp(op, "+") == 0 || strcmp(op, "-") == 0, fused_a = false, fused_b;
  sp_fp_path p = a_path ? *a_path : sp_arith_operand(ar, a, additive, &fused_a);
  sp_fp_path q = sp_arith_operand(ar, b, additive && !fused_a, &fused_b);
  sp_path_max(&p, &q);
  sp_fp_kind k = strcmp(op, "/") == 0 ? sp_fp_kind_of(bits, SP_FP64_DIV)
                                      : sp_fp_kind_of(bits, SP_FP64_SIMPLE);
  sp_arith_op(ar, &p, k, 1);
  return p;
}

static bool sp_arith_counted_op(const char *op) {
  return strcmp(op, "+") == 0 || strcmp(op, "-") == 0 || strcmp(op, "*") == 0 ||
         strcmp(op, "/") == 0 || strcmp(op, "<") == 0 || strcmp(op, ">") == 0 ||
         strcmp(op, "<=") == 0 || strcmp(op, ">=") == 0 || strcmp(op, "==") == 0 ||
         strcmp(op, "!=") == 0;
}

static sp_fp_path sp_arith_expr(sp_arith *ar, CXCursor e) {
  sp_fp_path p;
  memset(&p, 0, sizeof p);
  if (clang_Cursor_isNull(e) || ar->depth > 200) return p;
  ar->depth++;
  CXCursor s = sp_strip(e);
  CXCursor kids[3];
  char op[8];
  switch (clang_getCursorKind(s)) {
    case CXCursor_DeclRefExpr: {
      CXCursor d = sp_arith_scalar(s);
      int i = clang_Cursor_isNull(d) ? -1 : sp_arith_var_index(ar, d);
      if (i >= 0) p = ar->var_path[i];
      break;
    }
    case CXCursor_ArraySubscriptExpr:
    case CXCursor_MemberRefExpr:
      break; /* a load: the memory model's; its chain starts here */
    case CXCursor_BinaryOperator: {
      if (sp_children(s, kids, 2) != 2) break;
      sp_operator(ar->az, s, op, sizeof op);
      if (strcmp(op, "=") == 0) {
        p = sp_arith_expr(ar, kids[1]);
        CXCursor d = sp_arith_scalar(kids[0]);
        if (!clang_Cursor_isNull(d)) sp_arith_assign(ar, d, &p);
        else sp_arith_expr(ar, kids[0]); /* the subscripts' work, if any */
        break;
      }
      int bits = sp_fp_bits(clang_getCursorType(kids[0]));
      int bits_b = sp_fp_bits(clang_getCursorType(kids[1]));
      if (bits_b > bits) bits = bits_b;
      if (bits && sp_arith_counted_op(op)) {
        p = sp_arith_binary(ar, op, kids[0], kids[1], bits, NULL);
      } else {
        p = sp_arith_expr(ar, kids[0]);
        sp_fp_path q = sp_arith_expr(ar, kids[1]);
        sp_path_max(&p, &q);
      }
      break;
    }
    case CXCursor_CompoundAssignOperator: {
      if (sp_children(s, kids, 2) != 2) break;
      sp_operator(ar->az, s, op, sizeof op);
      int bits = sp_fp_bits(clang_getCursorType(kids[0]));
      CXCursor d = sp_arith_scalar(kids[0]);
      /* the target's value from earlier in this iteration, else a start (a value carried over) */
      sp_fp_path target;
      memset(&target, 0, sizeof target);
      int i = clang_Cursor_isNull(d) ? -1 : sp_arith_var_index(ar, d);
      if (i >= 0) target = ar->var_path[i];
      size_t n = strlen(op);
      if (bits && n == 2 && op[1] == '=') {
        char bin[2] = {op[0], '\0'};
        if (sp_arith_counted_op(bin)) p = sp_arith_binary(ar, bin, kids[0], kids[1], bits, &target);
      } else {
        p = sp_arith_expr(ar, kids[1]);
      }
      if (!clang_Cursor_isNull(d)) sp_arith_assign(ar, d, &p);
      break;
    }
    case CXCursor_UnaryOperator: {
      if (sp_children(s, kids, 1) != 1) break;
      sp_operator(ar->az, s, op, sizeof op);
      p = sp_arith_expr(ar, kids[0]);
      int bits = sp_fp_bits(clang_getCursorType(kids[0]));
      if (bits && (strcmp(op, "++") == 0 || strcmp(op, "--") == 0)) {
        sp_arith_op(ar, &p, sp_fp_kind_of(bits, SP_FP64_SIMPLE), 1);
        CXCursor d = sp_arith_scalar(kids[0]);
        if (!clang_Cursor_isNull(d)) sp_arith_assign(ar, d, &p);
      }
      break; /* a negation folds into the operation that uses it */
    }
    case CXCursor_CallExpr:
      p = sp_arith_call(ar, s);
      break;
    case CXCursor_ConditionalOperator: {
      int n = sp_children(s, kids, 3);
      for (int i = 0; i < n; i++) {
        sp_fp_path q = sp_arith_expr(ar, kids[i]);
        sp_path_max(&p, &q);
      }
      break;
    }
    default: {
      CXCursor all[16];
      int n = sp_children(s, all, 16);
      for (int i = 0; i < n && i < 16; i++)
        if (clang_isExpression(clang_getCursorKind(all[i]))) {
          sp_fp_path q = sp_arith_expr(ar, all[i]);
          sp_path_max(&p, &q);
        }
    }
  }
  ar->depth--;
  return p;
}

static void sp_arith_stmt(sp_arith *ar, CXCursor s) {
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt) return;
  if (k == CXCursor_DeclStmt) {
    CXCursor vars[32];
    int n = sp_children(s, vars, 32);
    for (int i = 0; i < n && i < 32; i++) {
      if (clang_getCursorKind(vars[i]) != CXCursor_VarDecl) continue;
      CXCursor kids[8];
      int nk = sp_children(vars[i], kids, 8);
      for (int j = nk - 1; j >= 0 && j < 8; j--)
        if (clang_isExpression(clang_getCursorKind(kids[j]))) {
          sp_fp_path p = sp_arith_expr(ar, kids[j]);
          sp_arith_assign(ar, vars[i], &p);
          break;
        }
    }
    return;
  }
  if (clang_isExpression(k)) {
    sp_arith_expr(ar, s);
    return;
  }
  int n = sp_children(s, NULL, 0);
  CXCursor *kids = n > 0 ? malloc((size_t)n * sizeof *kids) : NULL;
  if (!kids) return;
  n = sp_children(s, kids, n);
  for (int i = 0; i < n; i++) sp_arith_stmt(ar, kids[i]);
  free(kids);
}

void sp_arith_count(sp_az *az, sp_nest *nest, const CXCursor *loop_body) {
  for (int l = 0; l < nest->nloops; l++) {
    sp_arith ar;
    memset(&ar, 0, sizeof ar);
    ar.az = az;
    ar.out = &nest->loops[l].fp;
    memset(ar.out, 0, sizeof *ar.out);
    if (clang_Cursor_isNull(loop_body[l])) continue;
    sp_arith_stmt(&ar, loop_body[l]);
    memcpy(ar.out->chain, ar.longest.count, sizeof ar.out->chain);
  }
}
