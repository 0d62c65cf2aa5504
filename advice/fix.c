/* The advice per nest (which candidate to recommend) and the source edits that write it into the
 * user's pragmas: schedule clauses (gang, worker, vector, seq, auto, collapse, tile, num_gangs,
 * num_workers, vector_length) are replaced, every other clause and the directive's layout
 * (continuation lines included) is kept. Schedule clauses go right after the directive name, so
 * a second run finds exactly what it would write and changes nothing. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/advice.h"

char *sp_adv_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *g = realloc(buf, cap);
      if (!g) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = g;
    }
    size_t r = fread(buf + n, 1, 4096, f);
    n += r;
    if (r < 4096) break;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

/* Byte offset of 1-based line:col, or (size_t)-1 when outside the text. */
static size_t sp_adv_offset(const char *t, size_t len, unsigned line, unsigned col) {
  size_t o = 0;
  for (unsigned l = 1; l < line; l++) {
    const char *nl = memchr(t + o, '\n', len - o);
    if (!nl) return (size_t)-1;
    o = (size_t)(nl - t) + 1;
  }
  o += col ? col - 1 : 0;
  return o <= len ? o : (size_t)-1;
}

/* End of the directive starting at `start` (exclusive, before its final newline): lines ending in
 * a backslash continue it. */
static size_t sp_adv_directive_end(const char *t, size_t len, size_t start) {
  size_t e = start;
  for (;;) {
    while (e < len && t[e] != '\n') e++;
    size_t b = e;
    if (b > start && t[b - 1] == '\r') b--;
    if (e < len && b > start && t[b - 1] == '\\') {
      e++;
      continue;
    }
    return e > start && t[e - 1] == '\r' ? e - 1 : e;
  }
}

typedef struct sp_adv_clause {
  size_t start, end; /* within the directive text */
  char name[32];
} sp_adv_clause;

typedef struct sp_adv_dir {
  size_t name_end; /* just after the directive name ("parallel loop", "loop", ...) */
  int n;
  sp_adv_clause c[64];
} sp_adv_dir;

static bool sp_adv_is_sep(char c) { return c == ' ' || c == '\t' || c == ','; }

/* Skips spaces, commas, backslash-newlines and block comments. */
static size_t sp_adv_skip(const char *d, size_t i) {
  for (;;) {
    if (sp_adv_is_sep(d[i]) || d[i] == '\r' || d[i] == '\n') i++;
    else if (d[i] == '\\' && (d[i + 1] == '\n' || d[i + 1] == '\r')) i++;
    else if (d[i] == '/' && d[i + 1] == '*') {
      const char *e = strstr(d + i + 2, "*/");
      i = e ? (size_t)(e - d) + 2 : strlen(d);
    } else return i;
  }
}

static size_t sp_adv_word(const char *d, size_t i, char *buf, size_t n) {
  size_t s = i;
  while (isalnum((unsigned char)d[i]) || d[i] == '_') i++;
  size_t l = i - s < n - 1 ? i - s : n - 1;
  memcpy(buf, d + s, l);
  buf[l] = 0;
  return i;
}

/* Parses "#pragma acc NAME... clauses"; false when it is not an OpenACC directive. */
static bool sp_adv_parse(const char *d, sp_adv_dir *out) {
  memset(out, 0, sizeof *out);
  char w[32];
  size_t i = 0;
  if (d[i] != '#') return false;
  i = sp_adv_skip(d, i + 1);
  i = sp_adv_word(d, i, w, sizeof w);
  if (strcmp(w, "pragma")) return false;
  i = sp_adv_skip(d, i);
  i = sp_adv_word(d, i, w, sizeof w);
  if (strcmp(w, "acc")) return false;
  static const char *names[] = {"parallel", "kernels", "serial", "loop"};
  for (;;) {
    size_t j = sp_adv_skip(d, i);
    size_t e = sp_adv_word(d, j, w, sizeof w);
    bool is_name = false;
    for (size_t k = 0; k < 4; k++) is_name |= strcmp(w, names[k]) == 0;
    if (!is_name) break;
    i = e;
  }
  out->name_end = i;
  for (;;) {
    i = sp_adv_skip(d, i);
    if (!d[i] || (d[i] == '/' && d[i + 1] == '/')) break; /* a line comment ends the clauses */
    if (!(isalpha((unsigned char)d[i]) || d[i] == '_')) return false; /* not a clause list */
    if (out->n == (int)(sizeof out->c / sizeof out->c[0])) return false;
    sp_adv_clause *c = &out->c[out->n++];
    c->start = i;
    i = sp_adv_word(d, i, c->name, sizeof c->name);
    size_t j = i;
    while (d[j] == ' ' || d[j] == '\t') j++;
    if (d[j] == '(') {
      int depth = 0;
      for (; d[j]; j++) {
        if (d[j] == '(') depth++;
        else if (d[j] == ')' && --depth == 0) break;
      }
      if (!d[j]) return false;
      i = j + 1;
    }
    c->end = i;
  }
  return true;
}

static bool sp_adv_is_schedule_clause(const char *name, bool loop_level, bool construct_level) {
  static const char *loop_cl[] = {"gang", "worker", "vector", "seq", "auto", "collapse", "tile"};
  static const char *cons_cl[] = {"num_gangs", "num_workers", "vector_length"};
  for (size_t k = 0; loop_level && k < sizeof loop_cl / sizeof *loop_cl; k++)
    if (strcmp(name, loop_cl[k]) == 0) return true;
  for (size_t k = 0; construct_level && k < sizeof cons_cl / sizeof *cons_cl; k++)
    if (strcmp(name, cons_cl[k]) == 0) return true;
  return false;
}

/* The directive d with its schedule clauses replaced by `add` (may be ""). *others tells whether
 * any other clause remains. NULL on allocation failure or an unparsable directive. */
static char *sp_adv_rewrite(const char *d, bool loop_level, bool construct_level, const char *add,
                            bool *others) {
  sp_adv_dir pd;
  if (!sp_adv_parse(d, &pd)) return NULL;
  size_t len = strlen(d);
  char *keep = calloc(len + 1, 1); /* 1 = byte removed */
  if (!keep) return NULL;
  *others = false;
  bool drop[64] = {false};
  for (int k = 0; k < pd.n; k++) drop[k] = sp_adv_is_schedule_clause(pd.c[k].name, loop_level, construct_level);
  /* a device_type clause whose clauses all go goes too (`device_type(nvidia)` followed by
   * nothing for it is no valid directive); data clauses after it are not its own */
  static const char *const per_device[] = {"gang", "worker", "vector", "seq", "auto", "tile",
                                           "collapse", "independent", "num_gangs", "num_workers",
                                           "vector_length", "async", "wait"};
  for (int k = 0; k < pd.n; k++) {
    if (strcmp(pd.c[k].name, "device_type") && strcmp(pd.c[k].name, "dtype")) continue;
    bool had = false, kept = false;
    for (int j = k + 1; j < pd.n && strcmp(pd.c[j].name, "device_type") && strcmp(pd.c[j].name, "dtype"); j++)
      for (size_t q = 0; q < sizeof per_device / sizeof *per_device; q++)
        if (strcmp(pd.c[j].name, per_device[q]) == 0) had = true, kept |= !drop[j];
    drop[k] = had && !kept;
  }
  for (int k = 0; k < pd.n; k++) {
    const sp_adv_clause *c = &pd.c[k];
    if (!drop[k]) {
      *others = true;
      continue;
    }
    size_t s = c->start, e = c->end;
    size_t l = s;
    while (l > 0 && sp_adv_is_sep(d[l - 1])) l--;
    if (l > 0 && d[l - 1] != '\n') {
      s = l; /* the separator before it goes with it */
    } else {
      while (sp_adv_is_sep(d[e])) e++; /* first on its line: the one after it */
    }
    memset(keep + s, 1, e - s);
  }
  size_t alen = strlen(add);
  char *out = malloc(len + alen + 2);
  if (!out) {
    free(keep);
    return NULL;
  }
  size_t o = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i == pd.name_end && alen) {
      out[o++] = ' ';
      memcpy(out + o, add, alen);
      o += alen;
    }
    if (i < len && !keep[i]) out[o++] = d[i];
  }
  while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '\t')) o--;
  out[o] = 0;
  free(keep);
  return out;
}

typedef struct sp_adv_ctx {
  sp_adv_nest *a;
  const char *text;
  size_t len;
} sp_adv_ctx;

static int sp_adv_add_edit(sp_adv_nest *a, const char *file, size_t off, size_t len,
                           const char *text) {
  sp_adv_edit *e = realloc(a->edits, (size_t)(a->nedits + 1) * sizeof *e);
  if (!e) return -1;
  a->edits = e;
  e[a->nedits] = (sp_adv_edit){file, off, len, strdup(text)};
  if (!e[a->nedits].text) return -1;
  a->nedits++;
  return 0;
}

static void sp_adv_fail(sp_adv_nest *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->fix_error, sizeof a->fix_error, fmt, ap);
  va_end(ap);
}

/* Span of the `for (...)` header starting at off; false when it is not one. */
static bool sp_adv_for_header(const char *t, size_t len, size_t off, size_t *end) {
  if (off + 3 > len || strncmp(t + off, "for", 3) != 0) return false;
  size_t i = off + 3;
  while (i < len && isspace((unsigned char)t[i])) i++;
  if (i >= len || t[i] != '(') return false;
  int depth = 0;
  for (; i < len; i++) {
    if (t[i] == '(') depth++;
    else if (t[i] == ')' && --depth == 0) {
      *end = i + 1;
      return true;
    }
  }
  return false;
}

static bool sp_adv_same_loc(const sp_srcloc *x, const sp_srcloc *y) {
  return x->file && y->file && strcmp(x->file, y->file) == 0 && x->line == y->line &&
         x->col == y->col;
}

/* The loop's own directive (not a copy of an enclosing loop's combined one), or NULL. */
static const sp_clauses *sp_adv_own_directive(const sp_nest *nest, int k) {
  const sp_clauses *c = &nest->loops[k].clauses;
  if (!c->directive || !c->directive_loc.file) return NULL;
  for (int j = 0; j < k; j++)
    if (sp_adv_same_loc(&nest->loops[j].clauses.directive_loc, &c->directive_loc)) return NULL;
  return c;
}

void sp_adv_construct_clauses(const sp_adv_plan *p, char *buf, size_t n) {
  size_t u = (size_t)snprintf(buf, n, "num_gangs(%" PRId64 ")", p->num_gangs);
  if (p->num_workers && u < n) u += (size_t)snprintf(buf + u, n - u, " num_workers(%d)", p->num_workers);
  if (u < n) snprintf(buf + u, n - u, " vector_length(%d)", p->vector_length);
}

/* kernels regions shared by several nests get the sizes as loop arguments instead. */
static void sp_adv_loop_args(const char *clauses, const sp_adv_plan *p, char *buf, size_t n) {
  char tmp[160];
  snprintf(tmp, sizeof tmp, "%s", clauses);
  size_t u = 0;
  buf[0] = 0;
  for (char *save = NULL, *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    int wr;
    if (strcmp(w, "gang") == 0) wr = snprintf(buf + u, n - u, "%sgang(%" PRId64 ")", u ? " " : "", p->num_gangs);
    else if (strcmp(w, "worker") == 0) wr = snprintf(buf + u, n - u, "%sworker(%d)", u ? " " : "", p->num_workers);
    else if (strcmp(w, "vector") == 0) wr = snprintf(buf + u, n - u, "%svector(%d)", u ? " " : "", p->vector_length);
    else wr = snprintf(buf + u, n - u, "%s%s", u ? " " : "", w);
    if (wr > 0 && (size_t)wr < n - u) u += (size_t)wr;
  }
}

/* Whether name is in the list "a, b, c". */
static bool sp_adv_in_list(const char *list, const char *name) {
  size_t wl = strlen(name);
  for (const char *s = list; s && (s = strstr(s, name)); s += wl)
    if ((s == list || s[-1] == ' ' || s[-1] == ',') && (s[wl] == ',' || s[wl] == 0)) return true;
  return false;
}

/* The variables private on the loop directives around band position pos (or collapsing it), less
 * those in `own` (the directive there), for the directive the loop there gets: its iterations
 * ran under those directives (collapsed into one, or sequentially within a partition) and now
 * run on lanes of their own, each needing its own copy (a race otherwise). Only in a perfectly
 * nested band, where the variables live inside the innermost body; around an imperfect loop the
 * statements outside it may set them. */
static void sp_adv_inherited_private(const sp_nest *nest, int pos, const char *own, char *buf,
                                     size_t n) {
  buf[0] = 0;
  for (int q = 1; q <= pos; q++)
    if (nest->loops[q].imperfect) return;
  size_t u = 0;
  for (int q = 0; q <= pos; q++) {
    const char *list = nest->loops[q].clauses.private_vars;
    if (!list) continue;
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", list);
    for (char *save = NULL, *w = strtok_r(tmp, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
      if (!sp_adv_in_list(buf, w) && !sp_adv_in_list(own, w) && u + strlen(w) + 3 < n)
        u += (size_t)snprintf(buf + u, n - u, "%s%s", u ? ", " : "", w);
  }
}

/* The line ending of the line holding off: a file written with CRLF keeps them. */
static const char *sp_adv_eol(const char *t, size_t len, size_t off) {
  while (off < len && t[off] != '\n') off++;
  return off < len && off > 0 && t[off - 1] == '\r' ? "\r\n" : "\n";
}

/* Start of the line holding off, and whether only blanks precede off on it. */
static size_t sp_adv_line_start(const char *t, size_t off, bool *first) {
  size_t s = off;
  while (s > 0 && t[s - 1] != '\n') s--;
  *first = true;
  for (size_t i = s; i < off; i++)
    if (t[i] != ' ' && t[i] != '\t') *first = false;
  return s;
}

/* Builds the edits of one nest; on failure sets fix_error and leaves no edits. shared_construct:
 * another nest uses the same compute-construct directive. */
static void sp_adv_fix_nest(sp_adv_nest *a, bool shared_construct) {
  const sp_nest *nest = a->nest;
  const sp_adv_plan *p = &a->plan;
  if (a->candidate < 0) return;
  if (nest->construct != SP_CONSTRUCT_ACC_PARALLEL && nest->construct != SP_CONSTRUCT_ACC_KERNELS) {
    sp_adv_fail(a, "only OpenACC parallel and kernels constructs are rewritten (this is %s)",
                sp_construct_name(nest->construct));
    return;
  }
  for (int k = -1; k < nest->nloops; k++) {
    const sp_clauses *c = k < 0 ? &nest->construct_clauses : &nest->loops[k].clauses;
    if (c->directive && c->directive[0] != '#') {
      sp_adv_fail(a, "its directive at %u:%u is a _Pragma (%s): --fix rewrites #pragma lines "
                     "only; write the recommended clauses into it by hand",
                  c->directive_loc.line, c->directive_loc.col, c->directive);
      return;
    }
  }
  size_t len;
  char *t = sp_adv_read_file(nest->loc.file, &len);
  if (!t) {
    sp_adv_fail(a, "cannot read %s: %s", nest->loc.file, strerror(errno));
    return;
  }
  const sp_clauses *cons = &nest->construct_clauses;
  bool combined = cons->directive && nest->nloops > 0 &&
                  sp_adv_same_loc(&cons->directive_loc, &nest->loops[0].clauses.directive_loc);
  bool loop_args = shared_construct && nest->construct == SP_CONSTRUCT_ACC_KERNELS;
  if (shared_construct && !loop_args) {
    sp_adv_fail(a, "its parallel construct holds other nests too; give each nest its own "
                   "'parallel loop' to apply the advice");
    goto out;
  }
  char cc[128];
  sp_adv_construct_clauses(p, cc, sizeof cc);
  /* the separate compute construct */
  if (!combined && !loop_args) {
    if (!cons->directive || !cons->directive_loc.file) {
      sp_adv_fail(a, "the compute construct's directive was not found");
      goto out;
    }
    size_t off = sp_adv_offset(t, len, cons->directive_loc.line, cons->directive_loc.col);
    if (off == (size_t)-1 || t[off] != '#') {
      sp_adv_fail(a, "the directive at %u:%u is not where the analyzer saw it",
                  cons->directive_loc.line, cons->directive_loc.col);
      goto out;
    }
    size_t end = sp_adv_directive_end(t, len, off);
    char *old = strndup(t + off, end - off);
    bool others;
    char *nw = old ? sp_adv_rewrite(old, false, true, cc, &others) : NULL;
    if (!nw) {
      free(old);
      sp_adv_fail(a, "cannot parse the directive at line %u", cons->directive_loc.line);
      goto out;
    }
    if (strcmp(nw, old) && sp_adv_add_edit(a, nest->loc.file, off, end - off, nw)) goto oom;
    a->construct_directive = nw;
    free(old);
  }
  /* loop headers (interchange) and loop directives, by position */
  for (int pos = 0; pos < p->nband; pos++) {
    const sp_loop *L = &nest->loops[pos];
    size_t foff = sp_adv_offset(t, len, L->loc.line, L->loc.col), fend;
    if (foff == (size_t)-1 || !sp_adv_for_header(t, len, foff, &fend)) {
      sp_adv_fail(a, "no 'for' at %u:%u where the analyzer saw loop %s", L->loc.line, L->loc.col,
                  L->index);
      goto out;
    }
    if (p->perm[pos] != pos) {
      const sp_loop *M = &nest->loops[p->perm[pos]];
      size_t moff = sp_adv_offset(t, len, M->loc.line, M->loc.col), mend;
      if (moff == (size_t)-1 || !sp_adv_for_header(t, len, moff, &mend)) goto lost;
      char *h = strndup(t + moff, mend - moff);
      if (!h || sp_adv_add_edit(a, nest->loc.file, foff, fend - foff, h)) {
        free(h);
        goto oom;
      }
      free(h);
    }
    const char *want = p->clauses[pos];
    const sp_clauses *own = sp_adv_own_directive(nest, pos);
    bool is_combined = pos == 0 && combined;
    char add[512];
    if (strcmp(want, "-") == 0) add[0] = 0;
    else if (loop_args) sp_adv_loop_args(want, p, add, sizeof add);
    else snprintf(add, sizeof add, "%s", want);
    if (want[0] && strcmp(want, "-") &&
        !sp_adv_reduction_clauses(p, pos, own ? own->reduction : NULL, add, sizeof add)) {
      sp_adv_fail(a, "the reduction clauses for loop %s do not fit in a directive",
                  nest->loops[p->perm[pos]].index);
      goto out;
    }
    if (is_combined) {
      size_t u = strlen(add);
      snprintf(add + u, sizeof add - u, "%s%s", u ? " " : "", cc);
    }
    if (own && pos > 0 && want[0] && strcmp(want, "-") && strcmp(want, "seq")) {
      char priv[256];
      sp_adv_inherited_private(nest, pos, own->private_vars, priv, sizeof priv);
      size_t u = strlen(add);
      if (priv[0]) snprintf(add + u, sizeof add - u, " private(%s)", priv);
    }
    if (own) {
      size_t off = sp_adv_offset(t, len, own->directive_loc.line, own->directive_loc.col);
      if (off == (size_t)-1 || t[off] != '#') goto lost;
      size_t end = sp_adv_directive_end(t, len, off);
      char *old = strndup(t + off, end - off);
      if (!old) goto oom;
      if (want[0] == 0) { /* a sequential band loop: as written */
        a->directive[pos] = old;
        continue;
      }
      bool others;
      char *nw = sp_adv_rewrite(old, true, is_combined, add, &others);
      if (!nw) {
        free(old);
        sp_adv_fail(a, "cannot parse the directive at line %u", own->directive_loc.line);
        goto out;
      }
      if (strcmp(want, "-") == 0) {
        free(nw);
        free(old);
        if (others) {
          sp_adv_fail(a, "loop %s would be collapsed into the loop above but its directive has "
                         "clauses of its own", L->index);
          goto out;
        }
        size_t e2 = end < len && t[end] == '\n' ? end + 1 : end;
        bool first;
        size_t ls = sp_adv_line_start(t, off, &first);
        if (sp_adv_add_edit(a, nest->loc.file, first ? ls : off, e2 - (first ? ls : off), ""))
          goto oom;
        continue;
      }
      if (strcmp(nw, old) && sp_adv_add_edit(a, nest->loc.file, off, end - off, nw)) {
        free(nw);
        free(old);
        goto oom;
      }
      free(old);
      a->directive[pos] = nw;
    } else if (want[0] && strcmp(want, "-")) {
      bool first;
      size_t ls = sp_adv_line_start(t, foff, &first);
      char indent[128];
      size_t il = 0;
      for (size_t i = ls; i < foff && il + 1 < sizeof indent && (t[i] == ' ' || t[i] == '\t'); i++)
        indent[il++] = t[i];
      indent[il] = 0;
      char *dir = NULL, *ins = NULL, priv[256];
      sp_adv_inherited_private(nest, pos, NULL, priv, sizeof priv);
      if (asprintf(&dir, "#pragma acc loop %s%s%s%s", add, priv[0] ? " private(" : "", priv,
                   priv[0] ? ")" : "") < 0)
        goto oom;
      const char *eol = sp_adv_eol(t, len, foff);
      int r = first ? asprintf(&ins, "%s%s%s", dir, eol, indent)
                    : asprintf(&ins, "%s%s%s%s%s", eol, indent, dir, eol, indent);
      if (r < 0 || sp_adv_add_edit(a, nest->loc.file, foff, 0, ins)) {
        free(dir);
        free(ins);
        goto oom;
      }
      free(ins);
      a->directive[pos] = dir;
    }
  }
  goto out;
lost:
  sp_adv_fail(a, "the source changed since it was analyzed");
  goto out;
oom:
  sp_adv_fail(a, "out of memory");
out:
  if (a->fix_error[0]) {
    for (int i = 0; i < a->nedits; i++) free(a->edits[i].text);
    a->nedits = 0;
  }
  free(t);
}

int sp_adv_build(const sp_report_nest *rows, int n, const sp_adv_options *opt, sp_adv_nest **out) {
  sp_adv_nest *a = calloc((size_t)(n > 0 ? n : 1), sizeof *a);
  if (!a) return -1;
  for (int i = 0; i < n; i++) {
    a[i].nest = rows[i].nest;
    a[i].rank = rows[i].rank;
    a[i].candidate = -1;
    const sp_rank_result *r = rows[i].rank;
    if (!r) continue;
    /* the fastest expressible candidate among the refined ones (the ranking refines the best
     * expressible ones too, sp_rank_options.refine_also); only when none is refined, among the
     * screened ones, whose times come from a smaller and biased sample. Among those predicted
     * within SP_RANK_PLATEAU of it, the one the ranking's own tie rule puts first. */
    bool *usable = malloc((size_t)(r->n > 0 ? r->n : 1) * sizeof *usable); /* by order position */
    if (!usable) {
      free(a);
      return -1;
    }
    bool any_refined = false;
    for (int k = 0; k < r->n; k++) {
      char why[256];
      sp_adv_plan plan;
      const sp_rank_candidate *c = &r->candidates[r->order[k]];
      usable[k] = sp_adv_express(rows[i].nest, &c->schedule, opt->compiler, &plan, why, sizeof why) &&
                  sp_adv_gangs_launch(rows[i].nest, &plan, opt->compiler, why, sizeof why);
      if (k == 0 && !usable[k]) snprintf(a[i].best_why_not, sizeof a[i].best_why_not, "%s", why);
      any_refined |= usable[k] && c->refined;
    }
    double min_t = INFINITY, best_t = 0;
    for (int k = 0; k < r->n; k++) {
      const sp_rank_candidate *c = &r->candidates[r->order[k]];
      usable[k] = usable[k] && (c->refined || !any_refined);
      if (usable[k] && sp_adv_built_s(c) < min_t) min_t = sp_adv_built_s(c);
    }
    int pick = -1;
    for (int k = 0; k < r->n; k++) {
      const sp_rank_candidate *c = &r->candidates[r->order[k]];
      if (usable[k] && sp_adv_built_s(c) <= SP_RANK_PLATEAU * min_t &&
          (pick < 0 || sp_rank_plateau_before(c, &r->candidates[r->order[pick]])))
        pick = k;
    }
    /* a candidate within SP_ADV_TIE that the pragmas already state wins the tie */
    for (int k = 0; pick >= 0 && k < r->n; k++) {
      sp_adv_plan plan;
      const sp_rank_candidate *c = &r->candidates[r->order[k]];
      if (usable[k] &&
          sp_adv_built_s(c) <= SP_ADV_TIE * sp_adv_built_s(&r->candidates[r->order[pick]]) &&
          sp_adv_express(rows[i].nest, &c->schedule, opt->compiler, &plan, NULL, 0) &&
          sp_adv_plan_matches(rows[i].nest, &plan)) {
        pick = k;
        break;
      }
    }
    free(usable);
    if (pick >= 0) {
      a[i].candidate = r->order[pick];
      a[i].rank_pos = pick;
      sp_adv_express(rows[i].nest, &r->candidates[a[i].candidate].schedule, opt->compiler,
                     &a[i].plan, NULL, 0);
      best_t = sp_adv_built_s(&r->candidates[a[i].candidate]);
    }
    if (a[i].candidate < 0) {
      snprintf(a[i].fix_error, sizeof a[i].fix_error,
               "no ranked schedule can be written for %s", sp_adv_compiler_name(opt->compiler));
    } else if (r->default_index >= 0 &&
               sp_adv_built_s(&r->candidates[r->default_index]) < SP_ADV_MIN_GAIN * best_t &&
               !(sp_adv_gcc_kernels(rows[i].nest, opt->compiler) &&
                 !sp_adv_plan_matches(rows[i].nest, &a[i].plan))) {
      /* no predicted gain: leave the user's pragmas (and intent) alone; but GCC runs a kernels
       * region on one thread, not as the model's default, until its loops say `independent` */
      snprintf(a[i].fix_error, sizeof a[i].fix_error,
               "nothing to change: no schedule %s can express is predicted %.0f%% faster than "
               "the compiler default", sp_adv_compiler_name(opt->compiler),
               (SP_ADV_MIN_GAIN - 1) * 100);
      a[i].no_gain = true;
    }
  }
  for (int i = 0; i < n; i++) {
    if (!a[i].rank || a[i].fix_error[0]) continue;
    bool shared = false;
    for (int j = 0; j < n; j++)
      if (j != i && a[j].nest->construct_clauses.directive &&
          sp_adv_same_loc(&a[j].nest->construct_clauses.directive_loc,
                          &a[i].nest->construct_clauses.directive_loc))
        shared = true;
    sp_adv_fix_nest(&a[i], shared);
  }
  *out = a;
  return 0;
}

void sp_adv_free(sp_adv_nest *a, int n) {
  if (!a) return;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < a[i].nedits; k++) free(a[i].edits[k].text);
    free(a[i].edits);
    for (int k = 0; k < SP_MAX_LOOPS; k++) free(a[i].directive[k]);
    free(a[i].construct_directive);
  }
  free(a);
}

static int sp_adv_edit_cmp(const void *x, const void *y) {
  const sp_adv_edit *a = x, *b = y;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  return a->length < b->length ? -1 : a->length > b->length;
}

int sp_adv_file_edits(const sp_adv_nest *a, int n, const char *file, sp_adv_edit **out,
                      FILE *diag_out) {
  int total = 0;
  for (int i = 0; i < n; i++)
    if (a[i].nest && strcmp(a[i].nest->loc.file, file) == 0) total += a[i].nedits;
  sp_adv_edit *e = malloc((size_t)(total ? total : 1) * sizeof *e);
  if (!e) return -1;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (a[i].nest && strcmp(a[i].nest->loc.file, file) == 0)
      for (int k = 0; k < a[i].nedits; k++) e[m++] = a[i].edits[k];
  /* a stable order: equal keys keep nest order */
  qsort(e, (size_t)m, sizeof *e, sp_adv_edit_cmp);
  int w = 0;
  for (int k = 0; k < m; k++) {
    if (w > 0) {
      const sp_adv_edit *p = &e[w - 1];
      bool same = p->offset == e[k].offset && p->length == e[k].length &&
                  strcmp(p->text, e[k].text) == 0;
      bool overlap = e[k].offset < p->offset + p->length ||
                     (e[k].offset == p->offset && p->length == 0 && e[k].length == 0);
      if (same) continue;
      if (overlap) {
        if (diag_out)
          fprintf(diag_out, "%s: warning: two fixes overlap at byte %zu; the second is dropped\n",
                  file, e[k].offset);
        continue;
      }
    }
    e[w++] = e[k];
  }
  *out = e;
  return w;
}

char *sp_adv_apply(const char *file, const sp_adv_edit *edits, int nedits) {
  size_t len;
  char *t = sp_adv_read_file(file, &len);
  if (!t) return NULL;
  size_t extra = 0;
  for (int k = 0; k < nedits; k++) extra += strlen(edits[k].text);
  char *out = malloc(len + extra + 1);
  if (!out) {
    free(t);
    return NULL;
  }
  size_t o = 0, at = 0;
  for (int k = 0; k < nedits; k++) {
    if (edits[k].offset < at || edits[k].offset + edits[k].length > len) continue;
    memcpy(out + o, t + at, edits[k].offset - at);
    o += edits[k].offset - at;
    size_t tl = strlen(edits[k].text);
    memcpy(out + o, edits[k].text, tl);
    o += tl;
    at = edits[k].offset + edits[k].length;
  }
  memcpy(out + o, t + at, len - at);
  o += len - at;
  out[o] = 0;
  free(t);
  return out;
}

int sp_adv_files(const sp_adv_nest *a, int n, const char ***out) {
  const char **f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
  if (!f) return -1;
  int m = 0;
  for (int i = 0; i < n; i++) {
    bool seen = false;
    for (int j = 0; j < m; j++) seen |= strcmp(f[j], a[i].nest->loc.file) == 0;
    if (!seen) f[m++] = a[i].nest->loc.file;
  }
  *out = f;
  return m;
}
