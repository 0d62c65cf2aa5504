/* The timing harness for a real OpenACC compiler (README "Advice", issue 5): one generated C
 * file per example that #includes the kernel file and, per function holding OpenACC nests,
 * allocates and fills what the function reads, keeps it on the device around the calls, checks
 * one call's results (checksum) and times the next ones. The same harness drives the file as
 * written and its --fix output (same functions, same signatures), so the checksums compare. */
#include <clang-c/Index.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h" /* sp_xasprintf */
#include "schedpredict/harness.h"

typedef enum sp_h_kind { SP_H_REAL, SP_H_INT, SP_H_STRUCT, SP_H_OTHER } sp_h_kind;

typedef struct sp_h_field {
  char *name;
  sp_h_kind kind;
} sp_h_field;

/* A memory object the harness fills, maps and checksums. */
typedef struct sp_h_array {
  char *name;  /* the parameter's or global's name (for the JSON) */
  char *expr;  /* the harness's name for it: sp_pN for a parameter, the global itself */
  char *elem;  /* element type, unqualified */
  sp_h_kind kind;
  char *count; /* C expression: number of elements */
  int64_t index_bound;
  int nfields; /* structs: their scalar fields */
  sp_h_field *fields;
  bool global;
} sp_h_array;

typedef struct sp_h_fn {
  CXCursor cursor;
  char *name;
  char *skip; /* why it cannot be driven, or NULL */
  char *args; /* the call's argument list */
  char *defaulted; /* JSON list items of parameters given a default value */
  bool returns; /* returns an arithmetic value (checksummed) */
  int narrays;
  sp_h_array arrays[64];
} sp_h_fn;

typedef struct sp_h_ctx {
  const char *file;
  const sp_analyzer_options *opt;
  const sp_program *prog;
  CXFile cxfile;
  const char *contents; /* the file's text */
  size_t contents_len;
  int nfns;
  sp_h_fn *fns;
  char *globals_set; /* statements: non-const file-scope scalars given by --param */
} sp_h_ctx;

static char *sp_h_strdup_cx(CXString s) {
  char *r = strdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

/* Appends "sep + text" to *dst (text owned by the caller). */
static void sp_h_append(char **dst, const char *sep, const char *text) {
  char *s = sp_xasprintf("%s%s%s", *dst ? *dst : "", *dst && **dst ? sep : "", text);
  free(*dst);
  *dst = s;
}

static sp_h_kind sp_h_kind_of(CXType t) {
  t = clang_getCanonicalType(t);
  switch (t.kind) {
  case CXType_Float:
  case CXType_Double:
  case CXType_LongDouble: return SP_H_REAL;
  case CXType_Bool:
  case CXType_Char_U:
  case CXType_UChar:
  case CXType_UShort:
  case CXType_UInt:
  case CXType_ULong:
  case CXType_ULongLong:
  case CXType_Char_S:
  case CXType_SChar:
  case CXType_Short:
  case CXType_Int:
  case CXType_Long:
  case CXType_LongLong:
  case CXType_Enum: return SP_H_INT;
  case CXType_Record: return SP_H_STRUCT;
  default: return SP_H_OTHER;
  }
}

/* The type with const/volatile/restrict dropped, spelled as C. */
static char *sp_h_unqualified(CXType t) {
  char *s = sp_h_strdup_cx(clang_getTypeSpelling(clang_getCanonicalType(t)));
  static const char *const quals[] = {"const ", "volatile ", "restrict "};
  for (size_t q = 0; s && q < sizeof quals / sizeof *quals; q++) {
    char *at;
    while ((at = strstr(s, quals[q])) != NULL) memmove(at, at + strlen(quals[q]), strlen(at + strlen(quals[q])) + 1);
  }
  return s;
}

/* Strips pointers and array levels: the element type. *levels counts pointer levels. */
static CXType sp_h_element(CXType t, int *pointers) {
  *pointers = 0;
  for (;;) {
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_Pointer) {
      (*pointers)++;
      t = clang_getPointeeType(t);
    } else if (t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray ||
               t.kind == CXType_VariableArray || t.kind == CXType_DependentSizedArray) {
      t = clang_getArrayElementType(t);
    } else {
      return t;
    }
  }
}

static enum CXVisitorResult sp_h_field_visit(CXCursor c, CXClientData data) {
  sp_h_array *a = data;
  sp_h_kind k = sp_h_kind_of(clang_getCursorType(c));
  if (k != SP_H_REAL && k != SP_H_INT) return CXVisit_Continue; /* nested aggregates stay 0 */
  sp_h_field *f = realloc(a->fields, (size_t)(a->nfields + 1) * sizeof *f);
  if (!f) return CXVisit_Break;
  a->fields = f;
  f[a->nfields].name = sp_h_strdup_cx(clang_getCursorSpelling(c));
  f[a->nfields].kind = k;
  a->nfields++;
  return CXVisit_Continue;
}

/* What the analyzer knows about `name` in the function's nests: bytes to allocate, the index
 * bound of an integer array used as a subscript, a scalar's value. */
typedef struct sp_h_known {
  int64_t bytes, index_bound;
  bool value_known;
  double value;
} sp_h_known;

static sp_h_known sp_h_lookup(const sp_h_ctx *cx, const char *fn, const char *name) {
  sp_h_known k = {0, 0, false, 0};
  for (int i = 0; i < cx->prog->nnests; i++) {
    const sp_nest *n = &cx->prog->nests[i];
    if (strcmp(n->function, fn) != 0 || strcmp(n->loc.file, cx->file) != 0) continue;
    for (int a = 0; a < n->narrays; a++)
      if (strcmp(n->arrays[a].name, name) == 0 && n->arrays[a].total_bytes > k.bytes)
        k.bytes = n->arrays[a].total_bytes;
    for (int v = 0; n->codegen && v < n->codegen->nvars; v++) {
      const sp_cg_var *var = &n->codegen->vars[v];
      if (strcmp(var->name, name) != 0) continue;
      if (var->kind == SP_CG_ARRAY) {
        if (var->bytes > k.bytes) k.bytes = var->bytes;
        if (var->index_bound > k.index_bound) k.index_bound = var->index_bound;
      } else if (var->kind == SP_CG_SCALAR && var->value_known) {
        k.value_known = true;
        k.value = var->value;
      }
    }
  }
  return k;
}

static const sp_param *sp_h_param(const sp_h_ctx *cx, const char *name) {
  for (int i = 0; i < cx->opt->nparams; i++)
    if (strcmp(cx->opt->params[i].name, name) == 0) return &cx->opt->params[i];
  return NULL;
}

/* Fills a's element type fields from the element type t; false (with fn->skip) if unusable. */
static bool sp_h_set_elem(sp_h_fn *fn, sp_h_array *a, CXType t) {
  a->kind = sp_h_kind_of(t);
  a->elem = sp_h_unqualified(t);
  if (a->kind == SP_H_STRUCT) clang_Type_visitFields(clang_getCanonicalType(t), sp_h_field_visit, a);
  if (a->kind == SP_H_OTHER) {
    fn->skip = sp_xasprintf("%s: element type '%s' is not a number or a struct", a->name, a->elem);
    return false;
  }
  return true;
}

static void sp_h_add_param(sp_h_ctx *cx, sp_h_fn *fn, CXCursor parm, int idx) {
  char *name = sp_h_strdup_cx(clang_getCursorSpelling(parm));
  CXType t = clang_getCanonicalType(clang_getCursorType(parm));
  sp_h_kind k = sp_h_kind_of(t);
  char *arg = NULL;
  if (k == SP_H_REAL || k == SP_H_INT) {
    const sp_param *p = sp_h_param(cx, name);
    sp_h_known kn = sp_h_lookup(cx, fn->name, name);
    if (p) {
      arg = sp_xasprintf("%" PRId64, p->value);
    } else if (kn.value_known) {
      arg = sp_xasprintf("%.17g", kn.value);
    } else {
      /* not a size the model needed (a coefficient or a host step count): any fixed value
       * serves, as both builds get the same one */
      arg = strdup(k == SP_H_REAL ? "0.5" : "1");
      char *d = sp_xasprintf("\\\"%s=%s\\\"", name, arg);
      sp_h_append(&fn->defaulted, ",", d);
      free(d);
    }
  } else if (t.kind == CXType_Pointer || t.kind == CXType_ConstantArray ||
             t.kind == CXType_IncompleteArray || t.kind == CXType_VariableArray) {
    int ptrs;
    CXType e = sp_h_element(t, &ptrs);
    sp_h_known kn = sp_h_lookup(cx, fn->name, name);
    if (ptrs > 1) {
      fn->skip = sp_xasprintf("parameter %s is a pointer to pointers", name);
    } else if (kn.bytes <= 0) {
      fn->skip = sp_xasprintf("parameter %s: the analyzer knows no size for it (not accessed in a "
                             "nest, or through a derived pointer only)", name);
    } else if (fn->narrays < (int)(sizeof fn->arrays / sizeof *fn->arrays)) {
      sp_h_array *a = &fn->arrays[fn->narrays++];
      a->name = strdup(name);
      a->expr = sp_xasprintf("sp_p%d", idx);
      a->index_bound = kn.index_bound;
      if (sp_h_set_elem(fn, a, e)) {
        long long esz = clang_Type_getSizeOf(e);
        a->count = sp_xasprintf("%lld", esz > 0 ? (long long)((kn.bytes + esz - 1) / esz) : 0LL);
        arg = sp_xasprintf("(void *)%s", a->expr); /* any object pointer, VLA included */
      }
    }
  } else {
    fn->skip = sp_xasprintf("parameter %s has type '%s' the harness cannot make", name,
                           clang_getCString(clang_getTypeSpelling(t)));
  }
  if (arg) sp_h_append(&fn->args, ", ", arg);
  free(arg);
  free(name);
}

/* File-scope arrays the function's body names directly. */
static enum CXChildVisitResult sp_h_globals_visit(CXCursor c, CXCursor parent, CXClientData data) {
  sp_h_fn *fn = data;
  if (clang_getCursorKind(c) != CXCursor_DeclRefExpr) return CXChildVisit_Recurse;
  CXCursor d = clang_getCursorReferenced(c);
  if (clang_getCursorKind(d) != CXCursor_VarDecl ||
      clang_getCursorKind(clang_getCursorSemanticParent(d)) != CXCursor_TranslationUnit)
    return CXChildVisit_Recurse;
  CXType t = clang_getCanonicalType(clang_getCursorType(d));
  if (t.kind != CXType_ConstantArray) return CXChildVisit_Recurse;
  int ptrs;
  CXType e = sp_h_element(t, &ptrs);
  if (clang_isConstQualifiedType(e) || ptrs) return CXChildVisit_Recurse; /* tables keep theirs */
  char *name = sp_h_strdup_cx(clang_getCursorSpelling(d));
  for (int i = 0; i < fn->narrays; i++)
    if (fn->arrays[i].global && strcmp(fn->arrays[i].name, name) == 0) {
      free(name);
      return CXChildVisit_Recurse;
    }
  if (fn->narrays >= (int)(sizeof fn->arrays / sizeof *fn->arrays)) {
    free(name);
    return CXChildVisit_Break;
  }
  sp_h_array *a = &fn->arrays[fn->narrays++];
  a->name = name;
  a->expr = strdup(name);
  a->global = true;
  if (sp_h_set_elem(fn, a, e)) a->count = sp_xasprintf("sizeof %s / sizeof(%s)", name, a->elem);
  (void)parent;
  return CXChildVisit_Recurse;
}

static bool sp_h_has_nest(const sp_h_ctx *cx, const char *fn, bool *acc) {
  bool any = false;
  *acc = false;
  for (int i = 0; i < cx->prog->nnests; i++) {
    const sp_nest *n = &cx->prog->nests[i];
    if (strcmp(n->function, fn) != 0 || strcmp(n->loc.file, cx->file) != 0) continue;
    any = true;
    if (n->construct != SP_CONSTRUCT_OMP_TARGET && n->construct != SP_CONSTRUCT_NONE) *acc = true;
  }
  return any;
}

/* Whether the function's text holds an OpenACC directive (a nest the analyzer skipped). */
static bool sp_h_has_acc_text(const sp_h_ctx *cx, CXCursor fn) {
  CXSourceRange r = clang_getCursorExtent(fn);
  unsigned b, e;
  clang_getSpellingLocation(clang_getRangeStart(r), NULL, NULL, NULL, &b);
  clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &e);
  if (!cx->contents || e > cx->contents_len || b >= e) return false;
  for (const char *p = cx->contents + b; (p = memmem(p, (size_t)(cx->contents + e - p), "pragma", 6));
       p += 6) {
    const char *q = p + 6;
    while (q < cx->contents + e && (*q == ' ' || *q == '\t')) q++;
    if (q + 3 <= cx->contents + e && strncmp(q, "acc", 3) == 0) return true;
  }
  return false;
}

static enum CXChildVisitResult sp_h_top_visit(CXCursor c, CXCursor parent, CXClientData data) {
  sp_h_ctx *cx = data;
  CXFile f;
  clang_getSpellingLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
  if (!f || !clang_File_isEqual(f, cx->cxfile)) return CXChildVisit_Continue;
  char *name = sp_h_strdup_cx(clang_getCursorSpelling(c));
  enum CXCursorKind kind = clang_getCursorKind(c);
  if (kind == CXCursor_VarDecl) {
    CXType t = clang_getCursorType(c);
    const sp_param *p = sp_h_param(cx, name);
    if (p && sp_h_kind_of(t) == SP_H_INT && !clang_isConstQualifiedType(t)) {
      char *s = sp_xasprintf("  %s = %" PRId64 ";\n", name, p->value);
      sp_h_append(&cx->globals_set, "", s);
      free(s);
    }
  } else if (kind == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
    bool acc;
    bool nest = sp_h_has_nest(cx, name, &acc);
    if (nest || sp_h_has_acc_text(cx, c)) {
      sp_h_fn *grown = realloc(cx->fns, (size_t)(cx->nfns + 1) * sizeof *grown);
      if (grown) {
        cx->fns = grown;
        sp_h_fn *fn = &cx->fns[cx->nfns++];
        memset(fn, 0, sizeof *fn);
        fn->cursor = c;
        fn->name = strdup(name);
        fn->args = strdup("");
        CXType rt = clang_getResultType(clang_getCursorType(c));
        fn->returns = sp_h_kind_of(rt) == SP_H_REAL || sp_h_kind_of(rt) == SP_H_INT;
        if (!nest)
          fn->skip = strdup("the analyzer skipped its OpenACC nests (see its warnings), so it "
                            "knows no sizes for the arrays");
        else if (!acc)
          fn->skip = strdup("its nests are OpenMP target regions: gcc -fopenacc does not offload "
                            "them, so there is no schedule to compare");
        int np = clang_Cursor_getNumArguments(c);
        for (int i = 0; i < np && !fn->skip; i++)
          sp_h_add_param(cx, fn, clang_Cursor_getArgument(c, (unsigned)i), i);
        if (!fn->skip) clang_visitChildren(c, sp_h_globals_visit, fn);
      }
    }
  }
  free(name);
  (void)parent;
  return CXChildVisit_Continue;
}

/* A string for a JSON value inside a printf format in a C string literal. */
static void sp_h_put_json_str(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputs("\\\\\\", out);
    if ((unsigned char)*s >= 0x20) fputc(*s == '%' ? '%' : *s, out);
    if (*s == '%') fputc('%', out);
  }
}

static const char sp_h_runtime[] =
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <time.h>\n"
    "\n"
    "static double sp_h_now(void) {\n"
    "  struct timespec ts;\n"
    "  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
    "  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;\n"
    "}\n"
    "static uint64_t sp_h_mix(uint64_t x) {\n"
    "  x += 0x9E3779B97F4A7C15ull;\n"
    "  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
    "  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;\n"
    "  return x ^ (x >> 31);\n"
    "}\n"
    "/* reals in [1, 2): no zero divisors, no negative square roots */\n"
    "static double sp_h_real(size_t i, unsigned salt) {\n"
    "  return 1.0 + (double)(sp_h_mix(i * 131u + salt) >> 11) * 0x1.0p-53;\n"
    "}\n"
    "static long long sp_h_int(size_t i, unsigned salt, long long bound) {\n"
    "  return (long long)(sp_h_mix(i * 131u + salt) % (uint64_t)bound);\n"
    "}\n"
    "static void *sp_h_alloc(size_t n, size_t size) {\n"
    "  void *p = calloc(n ? n : 1, size);\n"
    "  if (!p) { fprintf(stderr, \"harness: out of memory (%zu x %zu bytes)\\n\", n, size); exit(1); }\n"
    "  return p;\n"
    "}\n"
    "static uint64_t sp_h_fnv(const void *p, size_t n) {\n"
    "  const unsigned char *b = p;\n"
    "  uint64_t h = 0xcbf29ce484222325ull;\n"
    "  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;\n"
    "  return h;\n"
    "}\n"
    "static int sp_h_cmp(const void *a, const void *b) {\n"
    "  double x = *(const double *)a, y = *(const double *)b;\n"
    "  return (x > y) - (x < y);\n"
    "}\n"
    "static void sp_h_times(const double *t, int n) {\n"
    "  double *s = sp_h_alloc((size_t)n, sizeof *s);\n"
    "  memcpy(s, t, (size_t)n * sizeof *s);\n"
    "  qsort(s, (size_t)n, sizeof *s, sp_h_cmp);\n"
    "  printf(\"\\\"median_us\\\":%.3f,\\\"times_us\\\":[\", n ? (n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])) : 0.0);\n"
    "  for (int i = 0; i < n; i++) printf(\"%s%.3f\", i ? \",\" : \"\", t[i]);\n"
    "  printf(\"]\");\n"
    "  free(s);\n"
    "}\n";

static void sp_h_emit_fill(FILE *out, const sp_h_array *a, unsigned salt) {
  fprintf(out, "  { %s *sp_e = (%s *)%s; size_t sp_n = %s;\n", a->elem, a->elem, a->expr, a->count);
  fprintf(out, "    for (size_t sp_i = 0; sp_i < sp_n; sp_i++) {\n");
  if (a->kind == SP_H_STRUCT) {
    for (int f = 0; f < a->nfields; f++)
      if (a->fields[f].kind == SP_H_REAL)
        fprintf(out, "      sp_e[sp_i].%s = sp_h_real(sp_i, %uu);\n", a->fields[f].name, salt + (unsigned)f);
      else
        fprintf(out, "      sp_e[sp_i].%s = sp_h_int(sp_i, %uu, 16);\n", a->fields[f].name, salt + (unsigned)f);
  } else if (a->kind == SP_H_REAL) {
    fprintf(out, "      sp_e[sp_i] = sp_h_real(sp_i, %uu);\n", salt);
  } else {
    /* integers that index another array stay inside it; others (counts, offsets) stay small */
    fprintf(out, "      sp_e[sp_i] = sp_h_int(sp_i, %uu, %" PRId64 ");\n", salt,
            a->index_bound > 0 ? a->index_bound : 16);
  }
  fputs("    }\n  }\n", out);
}

static void sp_h_emit_sum(FILE *out, const sp_h_array *a, bool first) {
  fprintf(out, "  { const %s *sp_e = (const %s *)%s; size_t sp_n = %s; double sp_s = 0;\n", a->elem,
          a->elem, a->expr, a->count);
  fputs("    for (size_t sp_i = 0; sp_i < sp_n; sp_i++) sp_s +=", out);
  if (a->kind == SP_H_STRUCT) {
    for (int f = 0; f < a->nfields; f++)
      fprintf(out, "%s (double)sp_e[sp_i].%s", f ? " +" : "", a->fields[f].name);
    if (!a->nfields) fputs(" 0", out);
  } else {
    fputs(" (double)sp_e[sp_i]", out);
  }
  fputs(";\n    printf(\"", out);
  if (!first) fputc(',', out);
  fputs("\\\"", out);
  sp_h_put_json_str(out, a->name);
  fprintf(out, "\\\":{\\\"sum\\\":%%.17g,\\\"fnv\\\":\\\"%%016llx\\\"}\", sp_s, "
               "(unsigned long long)sp_h_fnv(sp_e, sp_n * sizeof *sp_e));\n  }\n");
}

static void sp_h_emit_fn(FILE *out, const sp_h_ctx *cx, const sp_h_fn *fn) {
  fprintf(out, "static void sp_h_run_%s(int sp_reps) {\n", fn->name);
  for (int i = 0; i < fn->narrays; i++) {
    const sp_h_array *a = &fn->arrays[i];
    if (!a->global)
      fprintf(out, "  %s *%s = sp_h_alloc(%s, sizeof(%s));\n", a->elem, a->expr, a->count, a->elem);
  }
  for (int i = 0; i < fn->narrays; i++) sp_h_emit_fill(out, &fn->arrays[i], 1000u * (unsigned)i + 1u);
  fputs("  double *sp_t = sp_h_alloc((size_t)sp_reps, sizeof *sp_t);\n", out);
  fputs("  double sp_ret = 0;\n  (void)sp_ret;\n", out);
  char *list = NULL;
  for (int i = 0; i < fn->narrays; i++) {
    const sp_h_array *a = &fn->arrays[i];
    char *item = a->global ? strdup(a->expr) : sp_xasprintf("%s[0:%s]", a->expr, a->count);
    sp_h_append(&list, ", ", item);
    free(item);
  }
  char *call = sp_xasprintf("%s(%s)", fn->name, fn->args);
  /* the kernels' own copyin/copyout find the data present: the timing is the kernels */
  if (list) fprintf(out, "#pragma acc data copy(%s)\n", list);
  fputs("  {\n", out);
  if (fn->returns) fprintf(out, "    sp_ret = (double)%s;\n", call);
  else fprintf(out, "    %s;\n", call);
  fputs("#pragma acc wait\n", out);
  if (list) fprintf(out, "#pragma acc update host(%s)\n", list);
  fputs("    printf(\"{\\\"file\\\":\\\"", out);
  sp_h_put_json_str(out, cx->file);
  fprintf(out, "\\\",\\\"function\\\":\\\"%s\\\",\\\"nests\\\":[", fn->name);
  int nn = 0;
  for (int i = 0; i < cx->prog->nnests; i++) {
    const sp_nest *n = &cx->prog->nests[i];
    if (strcmp(n->function, fn->name) == 0 && strcmp(n->loc.file, cx->file) == 0)
      fprintf(out, "%s%u", nn++ ? "," : "", n->loc.line);
  }
  fprintf(out, "],\\\"defaulted\\\":[%s],\\\"checksum\\\":{", fn->defaulted ? fn->defaulted : "");
  fputs("\");\n", out);
  for (int i = 0; i < fn->narrays; i++) sp_h_emit_sum(out, &fn->arrays[i], i == 0);
  if (fn->returns)
    fprintf(out, "    printf(\"%s\\\"return\\\":{\\\"sum\\\":%%.17g}\", sp_ret);\n",
            fn->narrays ? "," : "");
  fputs("    printf(\"},\\\"reps\\\":%d,\", sp_reps);\n", out);
  fputs("    for (int sp_r = 0; sp_r < sp_reps; sp_r++) {\n      double sp_t0 = sp_h_now();\n", out);
  fprintf(out, "      %s;\n#pragma acc wait\n      sp_t[sp_r] = sp_h_now() - sp_t0;\n    }\n  }\n", call);
  fputs("  sp_h_times(sp_t, sp_reps);\n  printf(\"}\\n\");\n  fflush(stdout);\n  free(sp_t);\n", out);
  for (int i = 0; i < fn->narrays; i++)
    if (!fn->arrays[i].global) fprintf(out, "  free(%s);\n", fn->arrays[i].expr);
  fputs("}\n\n", out);
  free(list);
  free(call);
}

static void sp_h_fn_free(sp_h_fn *fn) {
  for (int i = 0; i < fn->narrays; i++) {
    sp_h_array *a = &fn->arrays[i];
    free(a->name);
    free(a->expr);
    free(a->elem);
    free(a->count);
    for (int f = 0; f < a->nfields; f++) free(a->fields[f].name);
    free(a->fields);
  }
  free(fn->name);
  free(fn->skip);
  free(fn->args);
  free(fn->defaulted);
}

char *sp_harness_source(const char *file, const sp_analyzer_options *opt, const sp_program *prog,
                        sp_diag *diag) {
  const char **args = calloc((size_t)opt->nclang_args + 2, sizeof *args);
  if (!args) return NULL;
  int na = 0;
  for (int i = 0; i < opt->nclang_args; i++) args[na++] = opt->clang_args[i];
  args[na++] = "-xc";
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode perr =
      clang_parseTranslationUnit2(index, file, args, na, NULL, 0, CXTranslationUnit_KeepGoing, &tu);
  free(args);
  if (perr != CXError_Success || !tu) {
    sp_diag_report(diag, SP_ERROR, file, 0, 0, "libclang could not parse the file (error %d)",
                   (int)perr);
    clang_disposeIndex(index);
    return NULL;
  }
  sp_h_ctx cx = {file, opt, prog, clang_getFile(tu, file), NULL, 0, 0, NULL, NULL};
  cx.contents = cx.cxfile ? clang_getFileContents(tu, cx.cxfile, &cx.contents_len) : NULL;
  clang_visitChildren(clang_getTranslationUnitCursor(tu), sp_h_top_visit, &cx);

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (out) {
    fprintf(out, "/* Generated by schedpredict --emit-harness: a timing harness for %s", file);
    fputs(".\n * Build with the kernel file as written, or -DSP_HARNESS_KERNEL='\"fixed.c\"' for "
          "another with the\n * same functions. Run: ./harness [REPS [FUNCTION]]; one JSON line "
          "per function. */\n", out);
    fprintf(out, "#ifndef SP_HARNESS_KERNEL\n#define SP_HARNESS_KERNEL \"%s\"", file);
    fputs("\n#endif\n#include SP_HARNESS_KERNEL\n\n", out);
    fputs(sp_h_runtime, out);
    fputs("\n", out);
    for (int i = 0; i < cx.nfns; i++)
      if (!cx.fns[i].skip) sp_h_emit_fn(out, &cx, &cx.fns[i]);
    fputs("int main(int argc, char **argv) {\n"
          "  int reps = argc > 1 ? atoi(argv[1]) : 5;\n"
          "  const char *only = argc > 2 ? argv[2] : NULL;\n"
          "  if (reps < 0) reps = 0;\n", out);
    if (cx.globals_set) fputs(cx.globals_set, out);
    for (int i = 0; i < cx.nfns; i++) {
      const sp_h_fn *fn = &cx.fns[i];
      fprintf(out, "  if (!only || strcmp(only, \"%s\") == 0) ", fn->name);
      if (!fn->skip) {
        fprintf(out, "sp_h_run_%s(reps);\n", fn->name);
        continue;
      }
      fputs("printf(\"{\\\"file\\\":\\\"", out);
      sp_h_put_json_str(out, file);
      fprintf(out, "\\\",\\\"function\\\":\\\"%s\\\",\\\"skipped\\\":\\\"", fn->name);
      sp_h_put_json_str(out, fn->skip);
      fputs("\\\"}\\n\");\n", out);
      if (!diag->quiet)
        fprintf(stderr, "%s: note: harness skips %s(): %s\n", file, fn->name, fn->skip);
    }
    fputs("  return 0;\n}\n", out);
    fclose(out);
  }
  for (int i = 0; i < cx.nfns; i++) sp_h_fn_free(&cx.fns[i]);
  free(cx.fns);
  free(cx.globals_set);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return text;
}
