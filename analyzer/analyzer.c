/* The analyzer's driver: parse with libclang, read the directives from the token stream, find the
 * nests to schedule, build each, and decide which loops are parallel. */
#include <clang-c/CXCompilationDatabase.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/walk.h"

/* ---- compiler arguments ---------------------------------------------------------------------- */

typedef struct sp_args {
  char **v;
  int n, cap;
} sp_args;

static void sp_args_push(sp_args *a, const char *s) {
  if (a->n == a->cap) {
    int cap = a->cap ? a->cap * 2 : 16;
    char **v = realloc(a->v, (size_t)cap * sizeof *v);
    if (!v) return;
    a->v = v;
    a->cap = cap;
  }
  char *copy = strdup(s);
  if (copy) a->v[a->n++] = copy;
}

static void sp_args_free(sp_args *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
}

static void sp_args_push_path(sp_args *out, const char *flag, const char *path,
                              const char *base) {
  char *joined = base && path[0] != '/' ? sp_xasprintf("%s%s/%s", flag, base, path)
                                        : sp_xasprintf("%s%s", flag, path);
  if (joined) sp_args_push(out, joined);
  free(joined);
}

/* Keeps what matters to parsing (defines, include paths, language standard); drops GPU compiler
 * flags clang 14 does not know (-fopenacc, -acc, -gpu=..., -Minfo, -foffload=...). Relative
 * include paths are taken relative to base (the compile command's directory) when given. */
static void sp_args_filter(sp_args *out, const char *const *in, int n, const char *skip_file,
                           const char *base) {
  static const char *const path_flags[] = {"-I", "-isystem", "-iquote", "-idirafter", "-include"};
  for (int i = 0; i < n; i++) {
    const char *a = in[i];
    if (skip_file && strcmp(a, skip_file) == 0) continue;
    bool done = false;
    for (size_t f = 0; f < sizeof path_flags / sizeof *path_flags && !done; f++) {
      size_t fl = strlen(path_flags[f]);
      if (strncmp(a, path_flags[f], fl) != 0) continue;
      if (a[fl]) {
        sp_args_push_path(out, path_flags[f], a + fl, base);
      } else if (i + 1 < n) {
        sp_args_push(out, a);
        sp_args_push_path(out, "", in[++i], base);
      }
      done = true;
    }
    if (done) continue;
    if ((strcmp(a, "-D") == 0 || strcmp(a, "-U") == 0) && i + 1 < n) {
      sp_args_push(out, a);
      sp_args_push(out, in[++i]);
    } else if (strncmp(a, "-D", 2) == 0 || strncmp(a, "-U", 2) == 0 ||
               strncmp(a, "-std=", 5) == 0 || strcmp(a, "-m32") == 0 ||
               strcmp(a, "-m64") == 0 || strncmp(a, "--sysroot", 9) == 0) {
      sp_args_push(out, a);
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "-MF") == 0 || strcmp(a, "-MT") == 0) {
      i++;
    }
  }
}

/* ---- the token stream: directives and integer macros ----------------------------------------- */

static int64_t sp_resolve_name(sp_az *az, const char *text, bool *ok) {
  char name[128];
  const char *colon = strchr(text, ':');
  const char *s = colon ? colon + 1 : text;
  while (isspace((unsigned char)*s)) s++;
  size_t n = 0;
  while ((isalnum((unsigned char)s[n]) || s[n] == '_') && n < sizeof name - 1) {
    name[n] = s[n];
    n++;
  }
  name[n] = 0;
  *ok = false;
  if (!n) return -1;
  int64_t v;
  if (sp_lookup_param(az, name, &v)) {
    *ok = true;
    return v;
  }
  for (int i = az->nmacros - 1; i >= 0; i--)
    if (strcmp(az->macros[i].name, name) == 0) {
      *ok = true;
      return az->macros[i].value;
    }
  return -1;
}

static void sp_add_macro(sp_az *az, const char *name, size_t len, const char *value) {
  while (*value == '(' || isspace((unsigned char)*value)) value++;
  char *end;
  long long v = strtoll(value, &end, 0);
  if (end == value) return;
  while (*end == ')' || *end == 'u' || *end == 'U' || *end == 'l' || *end == 'L' ||
         isspace((unsigned char)*end))
    end++;
  if (*end) return;
  sp_macro *m = realloc(az->macros, (size_t)(az->nmacros + 1) * sizeof *m);
  if (!m) return;
  az->macros = m;
  m[az->nmacros].name = strndup(name, len);
  m[az->nmacros].value = v;
  if (m[az->nmacros].name) az->nmacros++;
}

/* The directive's text from its "#" to the end of the line, continuation lines joined. */
static char *sp_directive_text(const char *src, size_t len, size_t begin, size_t *end_out) {
  char *buf = malloc(len - begin + 1);
  if (!buf) return NULL;
  size_t n = 0, i = begin;
  while (i < len && src[i] != '\n') {
    if (src[i] == '\\' && i + 1 < len && (src[i + 1] == '\n' || src[i + 1] == '\r')) {
      i += src[i + 1] == '\r' && i + 2 < len && src[i + 2] == '\n' ? 3 : 2;
      buf[n++] = ' ';
      continue;
    }
    if (src[i] == '/' && i + 1 < len && src[i + 1] == '/') break; /* trailing comment */
    buf[n++] = src[i] == '\t' || src[i] == '\r' ? ' ' : src[i];
    i++;
  }
  buf[n] = 0;
  *end_out = i;
  return buf;
}

/* Adds the directive whose text after "pragma" is `after`, at file offsets [begin, end) and
 * line:col; `text` is the directive as written (taken over). */
static void sp_push_directive(sp_az *az, const char *after, unsigned begin, unsigned end,
                              unsigned line, unsigned col, char *text) {
  sp_directive d;
  if (!text || !sp_directive_parse(after, &d)) {
    free(text);
    return;
  }
  d.begin_offset = begin;
  d.end_offset = end;
  d.line = line;
  d.col = col;
  d.clauses.directive = text;
  d.clauses.directive_loc = (sp_srcloc){az->filename, line, col};
  sp_directive *grown = realloc(az->dirs, (size_t)(az->ndirs + 1) * sizeof *grown);
  if (grown) {
    az->dirs = grown;
    az->dirs[az->ndirs++] = d;
  } else {
    sp_clauses_free(&d.clauses);
    free(d.unknown);
  }
}

/* The contents of the string literal at p ("acc loop", escapes \" and \\ undone), past which
 * *end points; NULL where p holds none. */
static char *sp_unquote(const char *p, const char **end) {
  while (isspace((unsigned char)*p)) p++;
  if (*p != '"') return NULL;
  char *out = malloc(strlen(p) + 1);
  if (!out) return NULL;
  size_t n = 0;
  for (p++; *p && *p != '"'; p++) {
    if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
    out[n++] = *p;
  }
  if (*p != '"') {
    free(out);
    return NULL;
  }
  out[n] = 0;
  if (end) *end = p + 1;
  return out;
}

/* `_Pragma ( "text" )` at p: the text, and in *end (if not NULL) what follows the ')'; NULL where
 * p does not start so. */
static char *sp_pragma_operator(const char *p, const char **end_out) {
  while (isspace((unsigned char)*p)) p++;
  if (strncmp(p, "_Pragma", 7)) return NULL;
  p += 7;
  while (isspace((unsigned char)*p)) p++;
  if (*p != '(') return NULL;
  const char *end;
  char *text = sp_unquote(p + 1, &end);
  while (text && isspace((unsigned char)*end)) end++;
  if (text && *end != ')') {
    free(text);
    return NULL;
  }
  if (text && end_out) *end_out = end + 1;
  return text;
}

/* A #define of a macro holding a _Pragma: remembered for its uses (sp_pragma_use). */
static void sp_note_pragma_macro(sp_az *az, const char *name, size_t len, const char *body,
                                 bool function_like) {
  if (!strstr(body, "_Pragma")) return;
  char *text = function_like ? NULL : sp_pragma_operator(body, NULL);
  if (!function_like && !text) return;
  sp_pragma_macro *m =
      realloc(az->pragma_macros, (size_t)(az->npragma_macros + 1) * sizeof *m);
  if (!m) {
    free(text);
    return;
  }
  az->pragma_macros = m;
  m[az->npragma_macros] = (sp_pragma_macro){strndup(name, len), text};
  if (m[az->npragma_macros].name) az->npragma_macros++;
  else free(text);
}

/* Identifier token i, at off (line:col), outside preprocessor lines: `_Pragma("acc ...")` written
 * out, or a use of a macro that holds one. Returns the file offset past what it read. */
static unsigned sp_pragma_use(sp_az *az, CXToken tok, unsigned off, unsigned line, unsigned col) {
  CXString s = clang_getTokenSpelling(az->tu, tok);
  const char *name = clang_getCString(s);
  unsigned end = off + (unsigned)strlen(name);
  if (strcmp(name, "_Pragma") == 0) {
    const char *past;
    char *text = sp_pragma_operator(az->contents + off, &past);
    if (text && past <= az->contents + az->contents_len) {
      end = (unsigned)(past - az->contents);
      sp_push_directive(az, text, off, end, line, col, strndup(az->contents + off, end - off));
    }
    free(text);
  } else {
    for (int m = az->npragma_macros - 1; m >= 0; m--) {
      const sp_pragma_macro *pm = &az->pragma_macros[m];
      if (strcmp(pm->name, name)) continue;
      if (pm->text)
        sp_push_directive(az, pm->text, off, end, line, col, strdup(name));
      else
        sp_diag_report(az->diag, SP_WARNING, az->filename, line, col,
                       "macro '%s' holds a _Pragma: the analyzer does not read directives or "
                       "loops inside a function-like macro's expansion; run it on the "
                       "preprocessed file (cc -E -P FILE.c > FILE.pp.c keeps the pragmas)",
                       name);
      break;
    }
  }
  clang_disposeString(s);
  return end;
}

static void sp_scan_directives(sp_az *az) {
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(az->tu, az->file, 0),
                                     clang_getLocationForOffset(az->tu, az->file,
                                                                (unsigned)az->contents_len));
  CXToken *toks = NULL;
  unsigned ntoks = 0;
  clang_tokenize(az->tu, all, &toks, &ntoks);
  unsigned skip_end = 0; /* the end of the preprocessor line or _Pragma last read */
  for (unsigned i = 0; i + 1 < ntoks; i++) {
    unsigned line, col, off;
    clang_getSpellingLocation(clang_getTokenLocation(az->tu, toks[i]), NULL, &line, &col, &off);
    if (off < skip_end) continue;
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier) {
      if (az->npragma_macros || az->contents[off] == '_')
        skip_end = sp_pragma_use(az, toks[i], off, line, col);
      continue;
    }
    if (clang_getTokenKind(toks[i]) != CXToken_Punctuation) continue;
    CXString s = clang_getTokenSpelling(az->tu, toks[i]);
    bool hash = strcmp(clang_getCString(s), "#") == 0;
    clang_disposeString(s);
    if (!hash) continue;
    CXString w = clang_getTokenSpelling(az->tu, toks[i + 1]);
    char word[16];
    snprintf(word, sizeof word, "%s", clang_getCString(w));
    clang_disposeString(w);
    unsigned wline, woff;
    clang_getSpellingLocation(clang_getTokenLocation(az->tu, toks[i + 1]), NULL, &wline, NULL,
                              &woff);
    if (wline != line || woff < off) continue; /* '#' of a stringizing macro body, etc. */
    size_t end;
    char *text = sp_directive_text(az->contents, az->contents_len, off, &end);
    if (!text) continue;
    skip_end = (unsigned)end;
    size_t word_at = woff - off + strlen(word);
    if (word_at > strlen(text)) { /* the word was cut by a comment or a continuation */
      free(text);
      continue;
    }
    if (strcmp(word, "define") == 0) {
      const char *p = text + word_at;
      while (isspace((unsigned char)*p)) p++;
      const char *name = p;
      while (isalnum((unsigned char)*p) || *p == '_') p++;
      if (p > name && *p != '(') sp_add_macro(az, name, (size_t)(p - name), p);
      if (p > name) sp_note_pragma_macro(az, name, (size_t)(p - name), p, *p == '(');
    } else if (strcmp(word, "pragma") == 0) {
      const char *t = text + 1;
      while (isspace((unsigned char)*t)) t++;
      sp_push_directive(az, text + word_at, off, (unsigned)end, line, col, sp_xasprintf("#%s", t));
    }
    free(text);
  }
  if (toks) clang_disposeTokens(az->tu, toks, ntoks);
  /* -D definitions count as macros too (after the file's, so they win in lookups) */
  for (int i = 0; i < az->opt->nclang_args; i++) {
    const char *a = az->opt->clang_args[i];
    if (strncmp(a, "-D", 2) || !a[2]) continue;
    const char *eq = strchr(a + 2, '=');
    if (eq) sp_add_macro(az, a + 2, (size_t)(eq - a - 2), eq + 1);
    else sp_add_macro(az, a + 2, strlen(a + 2), "1");
  }
  /* fold named clause arguments: vector_length(VL), num_gangs(n) */
  for (int i = 0; i < az->ndirs; i++) {
    sp_clauses *c = &az->dirs[i].clauses;
    int64_t *fields[] = {&c->gang_arg, &c->worker_arg, &c->vector_arg, &c->num_gangs,
                         &c->num_workers, &c->vector_length};
    const char *names[] = {"gang", "worker", "vector", "num_gangs", "num_workers",
                           "vector_length"};
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
      if (*fields[f] != -1) continue;
      const char *p = strstr(c->directive, names[f]);
      if (!p) continue;
      p = strchr(p, '(');
      bool ok = false;
      if (p) {
        int64_t v = sp_resolve_name(az, p + 1, &ok);
        if (ok) *fields[f] = v;
      }
    }
  }
}

/* ---- statements -------------------------------------------------------------------------------- */

static enum CXChildVisitResult sp_collect_stmts(CXCursor c, CXCursor parent, CXClientData d) {
  sp_az *az = d;
  if (!clang_Location_isFromMainFile(clang_getCursorLocation(c))) return CXChildVisit_Continue;
  if (clang_isStatement(clang_getCursorKind(c))) {
    if (az->nstmts == az->cap_stmts) {
      int cap = az->cap_stmts ? az->cap_stmts * 2 : 256;
      CXCursor *s = realloc(az->stmts, (size_t)cap * sizeof *s);
      unsigned *b = realloc(az->stmt_begin, (size_t)cap * sizeof *b);
      if (s) az->stmts = s;
      if (b) az->stmt_begin = b;
      if (!s || !b) return CXChildVisit_Break;
      az->cap_stmts = cap;
    }
    az->stmts[az->nstmts] = c;
    sp_cursor_range(c, &az->stmt_begin[az->nstmts], &(unsigned){0});
    az->nstmts++;
  }
  return CXChildVisit_Recurse;
}

/* Pre-order keeps a parent before its children; a stable merge by begin offset keeps that. */
static void sp_sort_stmts(sp_az *az) {
  int n = az->nstmts;
  int *idx = malloc((size_t)n * sizeof *idx), *tmp = malloc((size_t)n * sizeof *tmp);
  if (!idx || !tmp) goto out;
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int w = 1; w < n; w *= 2)
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int a = lo, b = mid, k = lo;
      while (a < mid && b < hi)
        tmp[k++] = az->stmt_begin[idx[b]] < az->stmt_begin[idx[a]] ? idx[b++] : idx[a++];
      while (a < mid) tmp[k++] = idx[a++];
      while (b < hi) tmp[k++] = idx[b++];
      memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof *idx);
    }
  CXCursor *s = malloc((size_t)n * sizeof *s);
  unsigned *b = malloc((size_t)n * sizeof *b);
  if (s && b) {
    for (int i = 0; i < n; i++) {
      s[i] = az->stmts[idx[i]];
      b[i] = az->stmt_begin[idx[i]];
    }
    free(az->stmts);
    free(az->stmt_begin);
    az->stmts = s;
    az->stmt_begin = b;
    s = NULL;
    b = NULL;
  }
  free(s);
  free(b);
out:
  free(idx);
  free(tmp);
}

static void sp_attach_directives(sp_az *az) {
  az->dir_target = malloc((size_t)(az->ndirs ? az->ndirs : 1) * sizeof *az->dir_target);
  az->dir_used = calloc((size_t)(az->ndirs ? az->ndirs : 1), sizeof *az->dir_used);
  if (!az->dir_target || !az->dir_used) return;
  for (int d = 0; d < az->ndirs; d++) {
    int lo = 0, hi = az->nstmts;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (az->stmt_begin[mid] < az->dirs[d].end_offset) lo = mid + 1;
      else hi = mid;
    }
    az->dir_target[d] = lo < az->nstmts ? lo : -1;
  }
}

/* The same statement reached by two traversals: libclang's cursors may differ in the parent
 * declaration they carry, so compare kind and extent. */
static bool sp_same_stmt(CXCursor a, CXCursor b) {
  return clang_getCursorKind(a) == clang_getCursorKind(b) &&
         clang_equalRanges(clang_getCursorExtent(a), clang_getCursorExtent(b));
}

int sp_directives_of(sp_az *az, CXCursor stmt, int *out, int max) {
  int n = 0;
  if (!az->dir_target) return 0;
  for (int d = 0; d < az->ndirs && n < max; d++)
    if (az->dir_target[d] >= 0 && sp_same_stmt(az->stmts[az->dir_target[d]], stmt))
      out[n++] = d;
  return n;
}

/* ---- nests ------------------------------------------------------------------------------------- */

typedef struct sp_region {
  sp_construct construct;
  int directive; /* index of the region's directive, or -1 */
  bool sole_loop; /* the construct's statement is one for loop: the loop, or a block of it alone */
} sp_region;

/* Whether `name` occurs as an identifier in text[0..len). */
static bool sp_mentions(const char *text, size_t len, const char *name) {
  const size_t nl = strlen(name);
  for (size_t i = 0; nl && i + nl <= len; i++) {
    if (memcmp(text + i, name, nl) != 0) continue;
    bool before = i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_');
    bool after = i + nl < len && (isalnum((unsigned char)text[i + nl]) || text[i + nl] == '_');
    if (!before && !after) return true;
  }
  return false;
}

static bool sp_in_clause_list(const char *list, const char *name) {
  return list && sp_mentions(list, strlen(list), name);
}

/* A scalar updated in loop k and read before written in its body carries a dependence. */
static int sp_scalar_dependence(sp_nb *nb, int k, const sp_clauses *construct) {
  sp_nest *n = nb->nest;
  for (int i = 0; i < nb->nevents; i++) {
    sp_scalar_event *ev = &nb->events[i];
    if (!(ev->loopmask & (1u << k))) continue;
    bool first_of_var = true;
    for (int j = 0; j < i; j++)
      if ((nb->events[j].loopmask & (1u << k)) && clang_equalCursors(nb->events[j].decl, ev->decl))
        first_of_var = false;
    if (!first_of_var) continue;
    unsigned decl_off;
    sp_cursor_range(ev->decl, &decl_off, &(unsigned){0});
    if (decl_off >= nb->loop_begin[k] && decl_off < nb->loop_end[k]) continue; /* private */
    bool written = false;
    for (int j = i; j < nb->nevents; j++)
      if ((nb->events[j].loopmask & (1u << k)) && nb->events[j].write &&
          clang_equalCursors(nb->events[j].decl, ev->decl))
        written = true;
    if (!written || (ev->write && !ev->read)) continue;
    bool covered = sp_in_clause_list(construct->reduction, ev->name) ||
                   sp_in_clause_list(construct->private_vars, ev->name);
    for (int l = k; l >= 0 && !covered; l = n->loops[l].parent)
      covered = sp_in_clause_list(n->loops[l].clauses.reduction, ev->name) ||
                sp_in_clause_list(n->loops[l].clauses.private_vars, ev->name);
    if (!covered) return i;
  }
  return -1;
}

static char *sp_ref_where(const sp_nest *n, int r) {
  const sp_ref *ref = &n->refs[r];
  return sp_xasprintf("%s %s at %u:%u", ref->access == SP_WRITE ? "write" : "read",
                      ref->text ? ref->text : "?", ref->loc.line, ref->loc.col);
}

static void sp_decide_parallel(sp_nb *nb, const sp_clauses *construct) {
  sp_nest *n = nb->nest;
  sp_az *az = nb->az;
  for (int k = 0; k < n->nloops; k++) {
    sp_loop *L = &n->loops[k];
    const sp_loop *owner = L->collapsed_into >= 0 ? &n->loops[L->collapsed_into] : L;
    unsigned fl = owner->clauses.flags;
    bool has_dir = owner->clauses.directive != NULL;
    enum { DECL_PAR, DECL_SEQ, DEF_SEQ, TEST } how;
    if (fl & SP_CL_SEQ) how = DECL_SEQ;
    else if (fl & (SP_CL_INDEPENDENT | SP_CL_GANG | SP_CL_WORKER | SP_CL_VECTOR)) how = DECL_PAR;
    else if (fl & SP_CL_AUTO) how = TEST;
    else if (has_dir && n->construct == SP_CONSTRUCT_ACC_PARALLEL) how = DECL_PAR;
    else if (has_dir && n->construct == SP_CONSTRUCT_OMP_TARGET) how = DECL_PAR;
    else if (!has_dir && (n->construct == SP_CONSTRUCT_ACC_PARALLEL ||
                          n->construct == SP_CONSTRUCT_OMP_TARGET))
      how = DEF_SEQ;
    else how = TEST;

    sp_dep_info dep = sp_dep_test_loop(n, k);
    int scalar = sp_scalar_dependence(nb, k, construct);
    char *why = NULL;
    if (dep.result != SP_DEP_NONE) {
      char *a = sp_ref_where(n, dep.ref_a), *b = sp_ref_where(n, dep.ref_b);
      if (dep.result == SP_DEP_PROVEN)
        why = sp_xasprintf("%s and %s touch the same element %lld iteration(s) of '%s' apart",
                           a, b, (long long)(dep.distance < 0 ? -dep.distance : dep.distance),
                           L->index);
      else
        why = sp_xasprintf("possible dependence between %s and %s (the test cannot exclude it)",
                           a, b);
      free(a);
      free(b);
    } else if (scalar >= 0) {
      sp_scalar_event *ev = &nb->events[scalar];
      why = sp_xasprintf("scalar '%s' is updated across iterations at %u:%u (a reduction or "
                         "recurrence); add reduction(op:%s) if it is one",
                         ev->name, ev->line, ev->col, ev->name);
    }
    switch (how) {
      case DECL_PAR:
        L->parallel = true;
        L->parallel_reason = SP_PAR_DECLARED;
        if (dep.result == SP_DEP_PROVEN || scalar >= 0) {
          sp_diag_report(az->diag, SP_WARNING, az->filename, L->loc.line, L->loc.col,
                         "loop '%s' is declared parallel but carries a dependence: %s; the "
                         "results may differ from the sequential program",
                         L->index, why);
          L->dependence = why;
          why = NULL;
        }
        break;
      case DECL_SEQ:
      case DEF_SEQ:
        L->parallel = false;
        L->parallel_reason = how == DECL_SEQ ? SP_PAR_DECLARED_SEQ : SP_PAR_DEFAULT_SEQ;
        L->dependence = why;
        why = NULL;
        break;
      case TEST:
        L->parallel = dep.result == SP_DEP_NONE && scalar < 0;
        L->parallel_reason = L->parallel ? SP_PAR_TEST_PROVED : SP_PAR_TEST_DEPENDENT;
        if (!L->parallel) {
          sp_diag_report(az->diag, SP_REMARK, az->filename, L->loc.line, L->loc.col,
                         "loop '%s' is kept sequential: %s", L->index, why);
          L->dependence = why;
          why = NULL;
        }
        break;
    }
    free(why);
  }
}

/* A sequential band loop with parallel band loops inside it that carries a dependence between
 * their iterations: as one launch (how the model runs it, the loop inside every thread) the
 * blocks would not wait for each other between its iterations. */
static void sp_warn_crossing(sp_az *az, const sp_nest *n) {
  if (n->construct == SP_CONSTRUCT_ACC_SERIAL) return;
  bool inner[SP_MAX_LOOPS] = {false};
  for (int k = 0; k < n->nloops; k++) inner[k] = n->loops[k].band && n->loops[k].parallel;
  for (int k = 0; k < n->nloops && n->loops[k].band; k++) {
    const sp_loop *L = &n->loops[k];
    if (L->parallel) continue;
    int ra = -1, rb = -1, m = sp_dep_crossing(n, k, inner, &ra, &rb);
    if (m < 0) continue;
    char *a = sp_ref_where(n, ra), *b = sp_ref_where(n, rb);
    sp_diag_report(az->diag, SP_WARNING, az->filename, L->loc.line, L->loc.col,
                   "sequential loop '%s' carries a dependence between iterations of loop '%s' "
                   "inside it (%s, %s), which run on different threads: in one launch the "
                   "blocks do not wait for each other between iterations of '%s'; put the compute "
                   "construct inside loop '%s' (a launch per iteration). The model runs '%s' "
                   "inside every thread of one launch, so its figures for this nest are not what "
                   "the GPU does",
                   L->index, n->loops[m].index, a, b, L->index, L->index, L->index);
    free(a);
    free(b);
    return;
  }
}

static int64_t sp_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static void sp_trip_counts(sp_nest *n) {
  int64_t lo[SP_MAX_LOOPS], hi[SP_MAX_LOOPS];
  if (!sp_loop_ranges(n, lo, hi)) return;
  for (int k = 0; k < n->nloops; k++) {
    sp_loop *L = &n->loops[k];
    /* the span upper - lower bounded as one function: a tile's i from ii to ii + 31 spans 31
     * whatever ii is (bounding the two apart gave 0..1024 trips) */
    __int128 step = L->step, span_max, span_min;
    sp_affine span;
    const sp_affine *from = step > 0 ? &L->lower : &L->upper;
    const sp_affine *to = step > 0 ? &L->upper : &L->lower;
    if (sp_affine_sub(&span, to, from)) {
      sp_affine_bounds(&span, k, lo, hi, &span_min, &span_max);
    } else {
      __int128 fmin, fmax, tmin_, tmax_;
      sp_affine_bounds(from, k, lo, hi, &fmin, &fmax);
      sp_affine_bounds(to, k, lo, hi, &tmin_, &tmax_);
      span_max = tmax_ - fmin;
      span_min = tmin_ - fmax;
    }
    if (step < 0) step = -step;
    __int128 tmax = span_max < 0 ? 0 : span_max / step + 1;
    __int128 tmin = span_min < 0 ? 0 : span_min / step + 1;
    L->trip_max = tmax > INT64_MAX ? INT64_MAX : (int64_t)tmax;
    L->trip_min = tmin > INT64_MAX ? INT64_MAX : (int64_t)tmin;
  }
}

/* Band iteration count: exact by enumeration where inner band bounds depend on an outer index,
 * within a work budget; otherwise from the per-loop trip counts. */
static double sp_band_count(const sp_nest *n, int k, int nband, int64_t *vals, long *budget,
                            bool *exact) {
  if (k >= nband) return 1;
  if (--*budget < 0) {
    *exact = false;
    return 0;
  }
  const sp_loop *L = &n->loops[k];
  int64_t first, last;
  if (!sp_affine_eval(&L->lower, vals, &first) || !sp_affine_eval(&L->upper, vals, &last)) {
    *exact = false;
    return 0;
  }
  int64_t trip = L->step > 0 ? (last < first ? 0 : sp_floor_div(last - first, L->step) + 1)
                             : (last > first ? 0 : sp_floor_div(first - last, -L->step) + 1);
  bool inner_depends = false;
  for (int j = k + 1; j < nband; j++)
    if (n->loops[j].lower.coef[k] || n->loops[j].upper.coef[k]) inner_depends = true;
  if (!inner_depends) {
    vals[k] = first;
    return (double)trip * sp_band_count(n, k + 1, nband, vals, budget, exact);
  }
  double total = 0;
  for (int64_t t = 0; t < trip && *exact; t++) {
    vals[k] = first + t * L->step;
    total += sp_band_count(n, k + 1, nband, vals, budget, exact);
  }
  return total;
}

static void sp_band_iterations(sp_nest *n) {
  const int nband = sp_nest_band_length(n);
  int64_t vals[SP_MAX_LOOPS] = {0};
  long budget = 20 * 1000 * 1000;
  bool exact = true;
  double c = sp_band_count(n, 0, nband, vals, &budget, &exact);
  if (!exact) {
    c = 1;
    for (int k = 0; k < nband; k++)
      c *= ((double)n->loops[k].trip_min + (double)n->loops[k].trip_max) / 2;
  }
  n->band_iterations = c;
  n->band_iterations_exact = exact;
}

/* ---- the share of a guarded reference's iterations that its guards exclude ----
 * By enumeration of its loops but the innermost, whose iterations that pass every guard are
 * counted in closed form. Beyond SP_GUARD_POINTS outer points the outer loops are taken in
 * blocks of consecutive iterations, each by its middle, weighed by its length: the count is
 * piecewise polynomial in the outer indices (linear for a triangular guard, which the middle
 * gives exactly), so only the blocks where a guard's face bends it are estimated. */
#define SP_GUARD_POINTS (1L << 18)

#define SP_GUARD_GROUPS 5 /* negated groups counted by inclusion-exclusion, 2^5 terms */
/* parity guards whose pattern repeats less often are not counted; the outer points then take a
 * whole period each, so their number is divided by it */
#define SP_GUARD_PERIOD 64

typedef struct sp_guard_walk {
  const sp_nest *n;
  const sp_ref *r;
  int group_bit[32]; /* per guard: its negated group's bit, -1 for a plain guard */
  int ngroups;
  int64_t vals[SP_MAX_LOOPS];
  int64_t stride[SP_MAX_LOOPS]; /* per position in r->loops */
  int64_t period; /* the lcm of the parity guards' moduli (1: none) */
  double all, held;
  bool ok;
} sp_guard_walk;

/* A parity guard at the innermost loop's iteration m, x = a + b * m. */
typedef struct sp_mod_term {
  const sp_guard *g;
  __int128 a, b;
} sp_mod_term;

static bool sp_mod_terms_hold(const sp_mod_term *t, int nt, __int128 m) {
  for (int i = 0; i < nt; i++) {
    __int128 x = t[i].a + t[i].b * m;
    if (x < INT64_MIN || x > INT64_MAX) return false;
    int64_t v = sp_guard_value(t[i].g->modulus, t[i].g->remainder, (int64_t)x);
    if ((t[i].g->cmp == SP_CMP_EQ0) != (v == 0)) return false;
  }
  return true;
}

/* Iterations m in [lo, hi] at which the parity guards hold. Each repeats with `period` in m
 * while its x keeps its sign (C's % follows the sign), so [lo, hi] is cut where an x changes
 * sign and each piece counted by its first period. */
static double sp_mod_count(const sp_mod_term *t, int nt, __int128 lo, __int128 hi, int64_t period) {
  __int128 cut[SP_MAX_LOOPS * 4 + 2];
  int nc = 0;
  cut[nc++] = lo;
  for (int i = 0; i < nt; i++) {
    if (t[i].b == 0) continue;
    /* the first m at which x >= 0 (b > 0: ceil(-a / d) = -floor(a / d)), or x < 0 (b < 0:
     * floor(a / d) + 1), d = |b| */
    __int128 a = t[i].a, d = t[i].b > 0 ? t[i].b : -t[i].b;
    __int128 floor_a = a >= 0 ? a / d : -((-a + d - 1) / d);
    __int128 m = t[i].b > 0 ? -floor_a : floor_a + 1;
    if (m > lo && m <= hi && nc < (int)(sizeof cut / sizeof *cut) - 1) cut[nc++] = m;
  }
  for (int i = 1; i < nc; i++) /* sort the few cuts */
    for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
      __int128 x = cut[j];
      cut[j] = cut[j - 1];
      cut[j - 1] = x;
    }
  cut[nc] = hi + 1;
  double count = 0;
  for (int c = 0; c < nc; c++) {
    __int128 s0 = cut[c], s1 = cut[c + 1] - 1;
    for (__int128 q = s0; q <= s1 && q < s0 + period; q++)
      if (sp_mod_terms_hold(t, nt, q)) count += (double)((s1 - q) / period + 1);
  }
  return count;
}

/* Iterations m in [0, trip) of x = first + m * step at which every plain guard and every guard
 * of the negated groups in `groups` (bits) holds; vals holds the outer indices (the innermost's
 * own entry is set to 0 here). */
static double sp_guard_inner_all(sp_guard_walk *w, int loop, int64_t first, int64_t step,
                                 int64_t trip, unsigned groups) {
  __int128 lo = 0, hi = (__int128)trip - 1;
  __int128 eq = -1, ne[32];
  int nne = 0, nmod = 0;
  sp_mod_term mod[32];
  w->vals[loop] = 0;
  for (int g = 0; g < w->r->nguards; g++) {
    const sp_guard *G = &w->r->guards[g];
    if (w->group_bit[g] >= 0 && !(groups >> w->group_bit[g] & 1)) continue;
    int64_t base;
    if (!sp_affine_eval(&G->expr, w->vals, &base)) {
      w->ok = false;
      return 0;
    }
    /* the guard's expression at iteration m: a + b * m */
    __int128 c = G->expr.coef[loop], a = (__int128)base + c * first, b = c * step;
    if (G->modulus) {
      mod[nmod++] = (sp_mod_term){G, a, b};
      continue;
    }
    if (G->cmp == SP_CMP_GE0) {
      if (b == 0) {
        if (a < 0) return 0;
      } else if (b > 0) {
        __int128 m = a >= 0 ? -(a / b) : (-a + b - 1) / b; /* ceil(-a / b) */
        if (m > lo) lo = m;
      } else {
        __int128 nb = -b, m = a >= 0 ? a / nb : -((-a + nb - 1) / nb); /* floor(a / -b) */
        if (m < hi) hi = m;
      }
    } else {
      bool zero_at = b == 0 ? a == 0 : (-a) % b == 0;
      __int128 m = b == 0 ? -1 : (-a) / b;
      if (G->cmp == SP_CMP_EQ0) {
        if (b == 0) {
          if (a != 0) return 0;
        } else if (!zero_at || (eq >= 0 && eq != m) || m < 0) {
          return 0;
        } else {
          eq = m;
        }
      } else if (b == 0) {
        if (a == 0) return 0;
      } else if (zero_at && nne < 32) {
        ne[nne++] = m;
      }
    }
  }
  if (eq >= 0) {
    if (eq < lo || eq > hi) return 0;
    lo = hi = eq;
  }
  if (hi < lo) return 0;
  double count = nmod ? sp_mod_count(mod, nmod, lo, hi, w->period) : (double)(hi - lo + 1);
  for (int i = 0; i < nne; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen |= ne[j] == ne[i];
    if (!seen && ne[i] >= lo && ne[i] <= hi && sp_mod_terms_hold(mod, nmod, ne[i])) count -= 1;
  }
  return count;
}

/* Iterations at which the reference runs: its plain guards hold and no negated group's all do,
 * by inclusion-exclusion over the groups. */
static double sp_guard_inner(sp_guard_walk *w, int loop, int64_t first, int64_t step, int64_t trip) {
  double count = 0;
  for (unsigned set = 0; set < 1u << w->ngroups && w->ok; set++)
    count += (__builtin_popcount(set) % 2 ? -1 : 1) * sp_guard_inner_all(w, loop, first, step, trip, set);
  return count;
}

static void sp_guard_walk_at(sp_guard_walk *w, int k, double weight) {
  const sp_ref *r = w->r;
  int loop = r->loops[k];
  const sp_loop *L = &w->n->loops[loop];
  int64_t first, last;
  if (!w->ok || !sp_affine_eval(&L->lower, w->vals, &first) ||
      !sp_affine_eval(&L->upper, w->vals, &last)) {
    w->ok = false;
    return;
  }
  int64_t trip = L->step > 0 ? (last < first ? 0 : sp_floor_div(last - first, L->step) + 1)
                             : (last > first ? 0 : sp_floor_div(first - last, -L->step) + 1);
  if (trip <= 0) return;
  if (k == r->nloops - 1) {
    w->all += weight * (double)trip;
    w->held += weight * sp_guard_inner(w, loop, first, L->step, trip);
    return;
  }
  int64_t s = w->stride[k];
  for (int64_t t = 0; t < trip && w->ok; t += s) {
    int64_t len = trip - t < s ? trip - t : s;
    /* the middle, or the two middle iterations of an even block: exact for a linear count;
     * under parity guards a whole period of them centred on the middle (where it cannot be,
     * one more with the two ends at half weight: still a period, and centred) */
    int64_t take = len < 2 ? len : w->period > 1 ? (w->period < len ? w->period : len) : 2 - len % 2;
    bool halves = w->period > 1 && take < len && (len - take) % 2;
    int64_t m0 = (len - take - halves) / 2, m1 = m0 + take + halves;
    for (int64_t m = m0; m < m1 && w->ok; m++) {
      w->vals[loop] = first + (t + m) * L->step;
      double end = halves && (m == m0 || m == m1 - 1) ? 0.5 : 1;
      sp_guard_walk_at(w, k + 1, weight * end * (double)len / (double)take);
    }
  }
}

static void sp_guard_shares(sp_nest *n) {
  for (int i = 0; i < n->nrefs; i++) {
    sp_ref *r = &n->refs[i];
    r->guard_excluded = 0;
    if (!r->nguards || r->nloops < 1) continue;
    sp_guard_walk w = {.n = n, .r = r, .ok = r->nguards <= 32, .period = 1};
    for (int g = 0; g < r->nguards && w.ok; g++) {
      int64_t M = r->guards[g].modulus;
      if (!M) continue;
      int64_t d = sp_gcd(w.period, M);
      w.ok = w.period / d <= SP_GUARD_PERIOD / M;
      if (w.ok) w.period = w.period / d * M;
    }
    for (int g = 0; g < r->nguards && w.ok; g++) { /* a group's guards are contiguous */
      int id = r->guards[g].negated_group;
      w.group_bit[g] = !id ? -1 : g > 0 && r->guards[g - 1].negated_group == id ? w.group_bit[g - 1]
                                                                                 : w.ngroups++;
      w.ok = w.ngroups <= SP_GUARD_GROUPS;
    }
    if (!w.ok) continue;
    double need = 1;
    for (int k = 0; k + 1 < r->nloops; k++) need *= (double)n->loops[r->loops[k]].trip_max;
    need /= (double)SP_GUARD_POINTS / (double)w.period;
    for (int k = 0; k < r->nloops; k++) {
      int64_t trip = n->loops[r->loops[k]].trip_max;
      int64_t s = need > 1 && k + 1 < r->nloops ? (int64_t)ceil(need) : 1;
      if (s > trip) s = trip > 0 ? trip : 1;
      w.stride[k] = s;
      need /= (double)s;
    }
    sp_guard_walk_at(&w, 0, 1);
    if (w.ok && w.all > 0) r->guard_excluded = 1 - w.held / w.all;
  }
}

static bool sp_push_nest(sp_program *p, sp_nest *nest) {
  sp_nest *grown = realloc(p->nests, (size_t)(p->nnests + 1) * sizeof *grown);
  if (!grown) return false;
  p->nests = grown;
  p->nests[p->nnests++] = *nest;
  return true;
}

static void sp_build_nest(sp_az *az, CXCursor f, sp_region region, int own_directive) {
  sp_nest nest;
  memset(&nest, 0, sizeof nest);
  nest.construct = region.construct;
  nest.construct_sole_loop = region.sole_loop || own_directive >= 0;
  nest.function = strdup(az->function ? az->function : "?");
  unsigned line, col;
  sp_cursor_loc(f, &line, &col, NULL);
  nest.loc = (sp_srcloc){az->filename, line, col};
  int cd = own_directive >= 0 ? own_directive : region.directive;
  if (cd >= 0) {
    const sp_clauses *src = &az->dirs[cd].clauses;
    nest.construct_clauses.num_gangs = src->num_gangs;
    nest.construct_clauses.num_workers = src->num_workers;
    nest.construct_clauses.vector_length = src->vector_length;
    nest.construct_clauses.reduction = sp_strdup_or_null(src->reduction);
    nest.construct_clauses.private_vars = sp_strdup_or_null(src->private_vars);
    nest.construct_clauses.directive = sp_strdup_or_null(src->directive);
    nest.construct_clauses.directive_loc = src->directive_loc;
    az->dir_used[cd] = true;
  }
  sp_nb nb;
  memset(&nb, 0, sizeof nb);
  nb.forced_choice = clang_getNullCursor();
  nb.az = az;
  nb.nest = &nest;
  sp_cursor_range(f, &nb.top_begin, &nb.top_end);
  sp_nb_walk_loop(&nb, f, -1, false);
  if (nb.skip || nb.value_error || nest.nloops == 0) {
    if (!nb.value_error) {
      sp_diag_report(az->diag, SP_WARNING, az->filename, line, col,
                     "loop nest in '%s' skipped: it cannot be modeled (see above)",
                     nest.function);
      if (az->nests_skipped) (*az->nests_skipped)++;
    }
    sp_nb_free(&nb);
    sp_nest_free(&nest);
    return;
  }
  nest.loops[0].band = true;
  for (int k = 1; k < nest.nloops; k++)
    nest.loops[k].band = nb.loop_sole_child[k] && nest.loops[nest.loops[k].parent].band;
  sp_trip_counts(&nest);
  sp_band_iterations(&nest);
  sp_arith_count(az, &nest, nb.loop_body);
  int64_t lo[SP_MAX_LOOPS], hi[SP_MAX_LOOPS];
  const bool ranged = sp_loop_ranges(&nest, lo, hi);
  const int wide = ranged ? sp_loop_index_overflows(&nest, lo, hi) : -1;
  int empty = -1; /* a band loop that never runs: nothing in the nest does */
  for (int k = 0; ranged && empty < 0 && k < nest.nloops; k++)
    if (nest.loops[k].band && nest.loops[k].trip_max == 0) empty = k;
  if (empty < 0 && nest.band_iterations_exact && nest.band_iterations == 0) /* (triangular) */
    for (int k = 0; k < nest.nloops && nest.loops[k].band; k++) empty = k;
  if (wide >= 0 || empty >= 0) {
    const sp_loop *L = &nest.loops[wide >= 0 ? wide : empty];
    if (wide >= 0)
      sp_diag_report(az->diag, SP_WARNING, L->loc.file, L->loc.line, L->loc.col,
                     "loop '%s' (step %lld, %lld iterations) reaches index values where the "
                     "model's 64-bit index arithmetic, with the lanes a launch runs past the last "
                     "iteration, would wrap: nest skipped; loop over the iteration count instead "
                     "(k from 0, with i = k * step)",
                     L->index, (long long)L->step, (long long)L->trip_max);
    else
      sp_diag_report(az->diag, SP_WARNING, L->loc.file, L->loc.line, L->loc.col,
                     "loop '%s' runs no iteration (from '%s', its bound '%s' is already passed%s), "
                     "so the nest does nothing: nest skipped; check the bounds (or the --param "
                     "values)", L->index, L->lower_text ? L->lower_text : "?",
                     L->upper_text ? L->upper_text : "?",
                     sp_loop_bounds_const(L) ? "" : " for every value of the loops around it");
    sp_diag_report(az->diag, SP_WARNING, az->filename, line, col,
                   "loop nest in '%s' skipped: it cannot be modeled (see above)", nest.function);
    if (az->nests_skipped) (*az->nests_skipped)++;
    sp_nb_free(&nb);
    sp_nest_free(&nest);
    return;
  }
  if (!sp_nb_finish_arrays(&nb, ranged ? lo : NULL, hi)) {
    sp_nb_free(&nb);
    sp_nest_free(&nest);
    return;
  }
  sp_decide_parallel(&nb, &nest.construct_clauses);
  sp_codegen_collect(&nb, f);
  sp_nb_drop_repeated_loads(&nb);
  sp_nb_sink_imperfect(&nb);
  sp_nb_free(&nb);
  sp_warn_crossing(az, &nest);
  sp_band_iterations(&nest);
  sp_guard_shares(&nest);
  if (!sp_push_nest(az->prog, &nest)) sp_nest_free(&nest);
}

static sp_construct sp_construct_of(sp_directive_kind k) {
  switch (k) {
    case SP_DIR_ACC_PARALLEL:
    case SP_DIR_ACC_PARALLEL_LOOP: return SP_CONSTRUCT_ACC_PARALLEL;
    case SP_DIR_ACC_KERNELS:
    case SP_DIR_ACC_KERNELS_LOOP: return SP_CONSTRUCT_ACC_KERNELS;
    case SP_DIR_ACC_SERIAL:
    case SP_DIR_ACC_SERIAL_LOOP: return SP_CONSTRUCT_ACC_SERIAL;
    case SP_DIR_OMP_TARGET:
    case SP_DIR_OMP_TARGET_LOOP:
    case SP_DIR_OMP_LOOP: return SP_CONSTRUCT_OMP_TARGET;
    default: return SP_CONSTRUCT_NONE;
  }
}

static void sp_walk_region(sp_az *az, CXCursor s, sp_region region);

/* Whether statement s is a for loop, or a block holding one for loop and nothing else (empty
 * statements aside). */
static bool sp_sole_loop(CXCursor s) {
  for (int depth = 0; depth < 8; depth++) { /* { { for ... } } */
    enum CXCursorKind k = clang_getCursorKind(s);
    if (k == CXCursor_ForStmt) return true;
    if (k != CXCursor_CompoundStmt) return false;
    CXCursor kids[64];
    int m = sp_children(s, kids, 64), n = 0;
    if (m > 64) return false;
    for (int i = 0; i < m; i++)
      if (clang_getCursorKind(kids[i]) != CXCursor_NullStmt) {
        if (n++) return false;
        s = kids[i];
      }
    if (n != 1) return false;
  }
  return false;
}

static void sp_walk_children(sp_az *az, CXCursor s, sp_region region) {
  CXCursor *kids = malloc(4096 * sizeof *kids);
  if (!kids) return;
  int n = sp_children(s, kids, 4096);
  for (int i = 0; i < n && i < 4096; i++)
    if (clang_isStatement(clang_getCursorKind(kids[i]))) sp_walk_region(az, kids[i], region);
  free(kids);
}

static void sp_walk_region(sp_az *az, CXCursor s, sp_region region) {
  int dirs[8];
  int nd = sp_directives_of(az, s, dirs, 8);
  int loop_dir = -1;
  for (int i = 0; i < nd; i++) {
    sp_directive_kind k = az->dirs[dirs[i]].kind;
    if (k == SP_DIR_ACC_PARALLEL || k == SP_DIR_ACC_KERNELS || k == SP_DIR_ACC_SERIAL ||
        k == SP_DIR_OMP_TARGET) {
      region.construct = sp_construct_of(k);
      region.directive = dirs[i];
      region.sole_loop = sp_sole_loop(s);
      az->dir_used[dirs[i]] = true;
    } else if (k != SP_DIR_OTHER) {
      loop_dir = dirs[i];
    }
  }
  if (clang_getCursorKind(s) != CXCursor_ForStmt) {
    sp_walk_children(az, s, region);
    return;
  }
  bool top = false;
  sp_region nest_region = region;
  if (loop_dir >= 0) {
    sp_directive_kind k = az->dirs[loop_dir].kind;
    if (k == SP_DIR_ACC_LOOP) {
      if (region.construct == SP_CONSTRUCT_NONE) {
        unsigned line = az->dirs[loop_dir].line, col = az->dirs[loop_dir].col;
        sp_diag_report(az->diag, SP_NOTE, az->filename, line, col,
                       "'acc loop' outside a compute construct (orphaned, e.g. in a routine): "
                       "modeled as in a parallel construct");
        nest_region.construct = SP_CONSTRUCT_ACC_PARALLEL;
      }
      top = true;
    } else if (k == SP_DIR_OMP_LOOP) {
      top = region.construct == SP_CONSTRUCT_OMP_TARGET || az->opt->all_loops;
      if (region.construct != SP_CONSTRUCT_OMP_TARGET) nest_region.construct = SP_CONSTRUCT_NONE;
    } else {
      nest_region.construct = sp_construct_of(k);
      nest_region.directive = -1;
      top = true;
    }
  } else if (region.construct == SP_CONSTRUCT_ACC_KERNELS ||
             region.construct == SP_CONSTRUCT_ACC_SERIAL) {
    top = true;
  } else if (region.construct == SP_CONSTRUCT_NONE && az->opt->all_loops) {
    /* an outermost loop around annotated nests is a host loop, not a nest of its own */
    unsigned b, e;
    sp_cursor_range(s, &b, &e);
    top = true;
    for (int d = 0; d < az->ndirs; d++)
      if (az->dirs[d].kind != SP_DIR_OTHER && az->dirs[d].begin_offset > b &&
          az->dirs[d].begin_offset < e)
        top = false;
  }
  if (top) {
    sp_build_nest(az, s, nest_region, loop_dir >= 0 && nest_region.directive < 0 ? loop_dir : -1);
    return;
  }
  /* a loop that is not scheduled (host loop, or redundant in a parallel region): its index is
   * a value for the nests inside, taken at its first iteration */
  if (az->nhost >= SP_MAX_LOOPS) {
    sp_walk_children(az, s, region);
    return;
  }
  sp_host_loop *h = &az->host[az->nhost];
  memset(h, 0, sizeof *h);
  h->var = clang_getNullCursor();
  CXCursor var, first;
  if (sp_for_index(az, s, &var, &first)) {
    h->var = var;
    sp_affine v;
    if (sp_expr_affine(az, NULL, first, &v, NULL) == SP_AFF_OK && sp_affine_is_const(&v)) {
      h->known = true;
      h->first = v.constant;
    }
    sp_cursor_loc(s, &h->line, &h->col, NULL);
  }
  az->nhost++;
  sp_walk_children(az, s, region);
  az->nhost--;
}

static enum CXChildVisitResult sp_visit_function(CXCursor c, CXCursor parent, CXClientData d) {
  sp_az *az = d;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
      !clang_Location_isFromMainFile(clang_getCursorLocation(c)))
    return CXChildVisit_Continue;
  CXCursor kids[64];
  int n = sp_children(c, kids, 64);
  CXString name = clang_getCursorSpelling(c);
  az->function = clang_getCString(name);
  clang_getExpansionLocation(clang_getRangeStart(clang_getCursorExtent(c)), NULL, NULL, NULL,
                             &az->function_begin);
  for (int i = 0; i < n && i < 64; i++)
    if (clang_getCursorKind(kids[i]) == CXCursor_CompoundStmt)
      sp_walk_region(az, kids[i], (sp_region){SP_CONSTRUCT_NONE, -1, false});
  az->function = NULL;
  clang_disposeString(name);
  return CXChildVisit_Continue;
}

/* ---- files ------------------------------------------------------------------------------------- */

static int sp_check_readable(const char *path, sp_diag *diag, const sp_analyzer_options *opt) {
  if (opt->unsaved_contents) return SP_EXIT_OK;
  FILE *f = fopen(path, "rb");
  if (!f) {
    sp_diag_report(diag, SP_ERROR, path, 0, 0, "cannot read the file: %s", strerror(errno));
    return SP_EXIT_INPUT;
  }
  unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  bool err = ferror(f);
  fclose(f);
  if (err) {
    sp_diag_report(diag, SP_ERROR, path, 0, 0, "cannot read the file (is it a directory?)");
    return SP_EXIT_INPUT;
  }
  if (memchr(buf, 0, n)) {
    sp_diag_report(diag, SP_ERROR, path, 0, 0,
                   "this is not a C source file (it holds binary data); give a .c file");
    return SP_EXIT_INPUT;
  }
  return SP_EXIT_OK;
}

static void sp_az_free(sp_az *az) {
  for (int i = 0; i < az->ndirs; i++) {
    sp_clauses_free(&az->dirs[i].clauses);
    free(az->dirs[i].unknown);
  }
  free(az->dirs);
  free(az->dir_target);
  free(az->dir_used);
  free(az->stmts);
  free(az->stmt_begin);
  for (int i = 0; i < az->nmacros; i++) free(az->macros[i].name);
  free(az->macros);
  for (int i = 0; i < az->npragma_macros; i++) {
    free(az->pragma_macros[i].name);
    free(az->pragma_macros[i].text);
  }
  free(az->pragma_macros);
  free(az->prelude);
}

/* mentioned[k]: set where --param k's name occurs in the file or in its -D definitions. */
static int sp_analyze_file(CXIndex index, const char *path, const sp_analyzer_options *opt,
                           sp_diag *diag, sp_program *prog, int *nests_skipped, bool *mentioned) {
  int rc = sp_check_readable(path, diag, opt);
  if (rc) return rc;
  sp_args args = {0};
  if (opt->compdb_dir) {
    CXCompilationDatabase_Error dberr;
    CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(opt->compdb_dir, &dberr);
    if (dberr != CXCompilationDatabase_NoError) {
      sp_diag_report(diag, SP_ERROR, opt->compdb_dir, 0, 0,
                     "no readable compile_commands.json in this directory (-p DIR names the "
                     "build directory that holds it)");
      return SP_EXIT_USAGE;
    }
    char *abs = realpath(path, NULL);
    CXCompileCommands cmds = clang_CompilationDatabase_getCompileCommands(db, abs ? abs : path);
    unsigned ncmds = cmds ? clang_CompileCommands_getSize(cmds) : 0;
    CXCompileCommand cmd = ncmds ? clang_CompileCommands_getCommand(cmds, 0) : NULL;
    CXCompileCommands all = NULL;
    if (!cmd && abs) { /* entries with relative paths: resolve them against DIR */
      all = clang_CompilationDatabase_getAllCompileCommands(db);
      unsigned nall = all ? clang_CompileCommands_getSize(all) : 0;
      for (unsigned i = 0; i < nall && !cmd; i++) {
        CXCompileCommand c = clang_CompileCommands_getCommand(all, i);
        CXString f = clang_CompileCommand_getFilename(c), d = clang_CompileCommand_getDirectory(c);
        const char *fs = clang_getCString(f), *ds = clang_getCString(d);
        char *cand = fs[0] == '/' ? strdup(fs)
                     : ds[0] == '/' ? sp_xasprintf("%s/%s", ds, fs)
                                    : sp_xasprintf("%s/%s/%s", opt->compdb_dir, ds, fs);
        char *real = cand ? realpath(cand, NULL) : NULL;
        if (real && strcmp(real, abs) == 0) cmd = c;
        free(real);
        free(cand);
        clang_disposeString(f);
        clang_disposeString(d);
      }
    }
    if (!cmd) {
      sp_diag_report(diag, SP_WARNING, path, 0, 0,
                     "not found in %s/compile_commands.json: analyzed with the arguments "
                     "after -- only", opt->compdb_dir);
    } else {
      unsigned na = clang_CompileCommand_getNumArgs(cmd);
      char **raw = calloc(na + 1, sizeof *raw);
      CXString dir = clang_CompileCommand_getDirectory(cmd);
      for (unsigned i = 1; raw && i < na; i++) {
        CXString a = clang_CompileCommand_getArg(cmd, i);
        raw[i - 1] = strdup(clang_getCString(a));
        clang_disposeString(a);
      }
      const char *ds = clang_getCString(dir);
      char *base = ds[0] == '/' ? strdup(ds) : sp_xasprintf("%s/%s", opt->compdb_dir, ds);
      if (raw) {
        CXString file = clang_CompileCommand_getFilename(cmd);
        sp_args_filter(&args, (const char *const *)raw, (int)na - 1, clang_getCString(file),
                       base);
        clang_disposeString(file);
        for (unsigned i = 0; i < na; i++) free(raw[i]);
      }
      clang_disposeString(dir);
      free(raw);
      free(base);
    }
    if (cmds) clang_CompileCommands_dispose(cmds);
    if (all) clang_CompileCommands_dispose(all);
    clang_CompilationDatabase_dispose(db);
    free(abs);
  }
  sp_args_filter(&args, opt->clang_args, opt->nclang_args, NULL, NULL);
  sp_args_push(&args, "-xc"); /* C whatever the file is called: C++ is reported as not C */

  sp_az az;
  memset(&az, 0, sizeof az);
  az.opt = opt;
  az.diag = diag;
  az.prog = prog;
  az.nests_skipped = nests_skipped;
  az.filename = sp_strpool_intern(&prog->pool, path);
  struct CXUnsavedFile unsaved = {path, opt->unsaved_contents, (unsigned long)opt->unsaved_length};
  enum CXErrorCode perr = clang_parseTranslationUnit2(
      index, path, (const char *const *)args.v, args.n, opt->unsaved_contents ? &unsaved : NULL,
      opt->unsaved_contents ? 1 : 0,
      CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord, &az.tu);
  char *defines = sp_codegen_defines(args.v, args.n);
  az.index = index;
  az.args = (const char *const *)args.v;
  az.nargs = args.n;
  if (perr != CXError_Success || !az.tu) {
    sp_args_free(&args);
    sp_diag_report(diag, SP_ERROR, path, 0, 0, "libclang could not parse the file (error %d)",
                   (int)perr);
    free(defines);
    return SP_EXIT_INPUT;
  }
  unsigned ndiag = clang_getNumDiagnostics(az.tu), nerr = 0;
  for (unsigned i = 0; i < ndiag; i++) {
    CXDiagnostic d = clang_getDiagnostic(az.tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                 CXDiagnostic_DisplayColumn);
      if (diag->stream) fprintf(diag->stream, "%s\n", clang_getCString(s));
      clang_disposeString(s);
      if (nerr++ < 1) diag->count[SP_ERROR]++;
    }
    clang_disposeDiagnostic(d);
  }
  if (nerr) {
    sp_diag_report(diag, SP_ERROR, path, 0, 0,
                   "%u error(s) from the C parser: fix them, or pass the include paths and "
                   "definitions the file needs after -- (e.g. -- -I include -DN=1024) or with -p",
                   nerr);
    clang_disposeTranslationUnit(az.tu);
    free(defines);
    sp_args_free(&args);
    return SP_EXIT_INPUT;
  }
  az.file = clang_getFile(az.tu, path);
  size_t len = 0;
  az.contents = az.file ? clang_getFileContents(az.tu, az.file, &len) : NULL;
  az.contents_len = len;
  if (!az.contents) {
    sp_diag_report(diag, SP_ERROR, path, 0, 0, "libclang lost the file's contents");
    clang_disposeTranslationUnit(az.tu);
    free(defines);
    sp_args_free(&args);
    return SP_EXIT_INPUT;
  }
  for (int k = 0; k < opt->nparams; k++)
    mentioned[k] |= sp_mentions(az.contents, az.contents_len, opt->params[k].name) ||
                    (defines && sp_mentions(defines, strlen(defines), opt->params[k].name));
  az.prelude = sp_codegen_prelude(&az, defines);
  free(defines);
  sp_scan_directives(&az);
  clang_visitChildren(clang_getTranslationUnitCursor(az.tu), sp_collect_stmts, &az);
  sp_sort_stmts(&az);
  sp_attach_directives(&az);
  for (int d = 0; d < az.ndirs; d++)
    if (az.dirs[d].unknown)
      sp_diag_report(diag, SP_WARNING, az.filename, az.dirs[d].line, az.dirs[d].col,
                     "clause(s) %s not understood: ignored", az.dirs[d].unknown);
  clang_visitChildren(clang_getTranslationUnitCursor(az.tu), sp_visit_function, &az);
  for (int d = 0; d < az.ndirs; d++) {
    sp_directive_kind k = az.dirs[d].kind;
    if (k == SP_DIR_OTHER || (az.dir_used && az.dir_used[d])) continue;
    if (k == SP_DIR_OMP_LOOP && !opt->all_loops) continue; /* host OpenMP */
    if (az.dir_target && az.dir_target[d] >= 0 &&
        clang_getCursorKind(az.stmts[az.dir_target[d]]) == CXCursor_ForStmt)
      continue; /* its nest was reported when it was skipped */
    const char *word;
    size_t wl = sp_word_instead_of_for(&az, az.dirs[d].end_offset, &word);
    if (wl > 0)
      sp_diag_report(diag, SP_WARNING, az.filename, az.dirs[d].line, az.dirs[d].col,
                     "'%s' directive is followed by '%.*s', not by a for loop as the file spells "
                     "it: ignored; if a macro makes the loop, write the loop out, or run "
                     "schedpredict on the preprocessed file (cc -E -P FILE.c > FILE.pp.c keeps "
                     "the pragmas)",
                     sp_directive_kind_name(k), (int)wl, word);
    else
      sp_diag_report(diag, SP_WARNING, az.filename, az.dirs[d].line, az.dirs[d].col,
                     "'%s' directive is not followed by a for loop the analyzer could attach it "
                     "to: ignored", sp_directive_kind_name(k));
  }
  rc = az.status;
  sp_az_free(&az);
  clang_disposeTranslationUnit(az.tu);
  sp_args_free(&args);
  return rc;
}

int sp_analyze(const char *const *files, int nfiles, const sp_analyzer_options *opt,
               sp_diag *diag, sp_program *out) {
  CXIndex index = clang_createIndex(0, 0);
  int worst = SP_EXIT_OK, skipped = 0;
  bool *mentioned = calloc((size_t)(opt->nparams > 0 ? opt->nparams : 1), sizeof *mentioned);
  if (!mentioned) {
    clang_disposeIndex(index);
    sp_diag_report(diag, SP_ERROR, NULL, 0, 0, "out of memory");
    return SP_EXIT_INTERNAL;
  }
  for (int i = 0; i < nfiles; i++) {
    char **grown = realloc(out->files, (size_t)(out->nfiles + 1) * sizeof *grown);
    if (grown) {
      out->files = grown;
      out->files[out->nfiles] = strdup(files[i]);
      if (out->files[out->nfiles]) out->nfiles++;
    }
    int rc = sp_analyze_file(index, files[i], opt, diag, out, &skipped, mentioned);
    if (rc > worst) worst = rc;
  }
  clang_disposeIndex(index);
  for (int k = 0; worst == SP_EXIT_OK && k < opt->nparams; k++)
    if (!mentioned[k])
      sp_diag_report(diag, SP_WARNING, nfiles == 1 ? files[0] : NULL, 0, 0,
                     "--param %s=%lld changes nothing: no identifier '%s' in %s or its -D "
                     "definitions (check the name)",
                     opt->params[k].name, (long long)opt->params[k].value, opt->params[k].name,
                     nfiles == 1 ? "the file" : "the files");
  free(mentioned);
  if (worst == SP_EXIT_OK && out->nnests == 0) {
    if (skipped)
      sp_diag_report(diag, SP_ERROR, nfiles == 1 ? files[0] : NULL, 0, 0,
                     "no loop nest to schedule: the %d nest%s found %s skipped (see the warnings "
                     "above)",
                     skipped, skipped == 1 ? "" : "s", skipped == 1 ? "was" : "were");
    else
      sp_diag_report(diag, SP_ERROR, nfiles == 1 ? files[0] : NULL, 0, 0,
                     "no loop nest to schedule: mark loops with '#pragma acc parallel loop' (or "
                     "kernels, or omp target teams distribute), or pass --all-loops");
    worst = SP_EXIT_NO_NESTS;
  }
  return worst;
}
