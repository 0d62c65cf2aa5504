/* OpenACC and OpenMP directives, read from the pragma's text (clang 14 does not parse OpenACC). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"

typedef struct sp_lexer {
  const char *p;
} sp_lexer;

static void sp_skip_space(sp_lexer *lx) {
  while (*lx->p && (isspace((unsigned char)*lx->p) || *lx->p == ',')) lx->p++;
}

/* Next word ([A-Za-z_][A-Za-z0-9_]*) into buf; false if none. */
static bool sp_next_word(sp_lexer *lx, char *buf, size_t n) {
  sp_skip_space(lx);
  const char *s = lx->p;
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  size_t len = 0;
  while (isalnum((unsigned char)s[len]) || s[len] == '_') len++;
  if (len >= n) len = n - 1;
  memcpy(buf, s, len);
  buf[len] = 0;
  while (isalnum((unsigned char)*lx->p) || *lx->p == '_') lx->p++;
  return true;
}

static bool sp_peek_word(const sp_lexer *lx, const char *word) {
  sp_lexer copy = *lx;
  char buf[64];
  return sp_next_word(&copy, buf, sizeof buf) && strcmp(buf, word) == 0;
}

/* If the next character is '(', returns the text up to the matching ')' (malloc'd). */
static char *sp_paren_arg(sp_lexer *lx) {
  const char *s = lx->p;
  while (*s == ' ' || *s == '\t') s++;
  if (*s != '(') return NULL;
  int depth = 0;
  const char *start = s + 1;
  for (; *s; s++) {
    if (*s == '(') depth++;
    else if (*s == ')' && --depth == 0) break;
  }
  size_t len = (size_t)(s - start);
  char *arg = malloc(len + 1);
  if (!arg) return NULL;
  memcpy(arg, start, len);
  arg[len] = 0;
  lx->p = *s ? s + 1 : s;
  return arg;
}

/* An integer argument, possibly after a "num:" / "length:" / "static:" modifier. Returns -1
 * when the argument is not an integer literal (the analyzer resolves names later). */
static int64_t sp_int_arg(const char *arg) {
  if (!arg) return 0;
  const char *colon = strchr(arg, ':');
  const char *s = colon ? colon + 1 : arg;
  while (isspace((unsigned char)*s)) s++;
  char *end;
  long long v = strtoll(s, &end, 0);
  while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
  while (isspace((unsigned char)*end)) end++;
  if (end == s || *end) return -1;
  return v;
}

static void sp_append_unknown(char **unknown, const char *word) {
  char *joined = *unknown ? sp_xasprintf("%s, %s", *unknown, word) : strdup(word);
  free(*unknown);
  *unknown = joined;
}

static const char *const sp_ignored_clauses[] = {
    "copy", "copyin", "copyout", "create", "present", "deviceptr", "no_create", "attach",
    "async", "wait", "if", "default", "firstprivate", "self", "device_type", "dtype",
    "present_or_copy", "present_or_copyin", "present_or_copyout", "present_or_create",
    "pcopy", "pcopyin", "pcopyout", "pcreate", "map", "device", "nowait", "depend",
    "schedule", "dist_schedule", "shared", "defaultmap", "is_device_ptr", "order", "bind",
    "finalize", "if_present", "safelen", "simdlen", "aligned", "linear", "nontemporal",
    "lastprivate", "proc_bind", "num_threads", "allocate", NULL};

static bool sp_is_ignored_clause(const char *w) {
  for (int i = 0; sp_ignored_clauses[i]; i++)
    if (strcmp(sp_ignored_clauses[i], w) == 0) return true;
  return false;
}

static void sp_parse_clauses(sp_lexer *lx, sp_directive *d) {
  char w[64];
  sp_clauses *c = &d->clauses;
  while (sp_next_word(lx, w, sizeof w)) {
    char *arg = sp_paren_arg(lx);
    if (strcmp(w, "gang") == 0) {
      c->flags |= SP_CL_GANG;
      c->gang_arg = sp_int_arg(arg);
    } else if (strcmp(w, "worker") == 0) {
      c->flags |= SP_CL_WORKER;
      c->worker_arg = sp_int_arg(arg);
    } else if (strcmp(w, "vector") == 0) {
      c->flags |= SP_CL_VECTOR;
      c->vector_arg = sp_int_arg(arg);
    } else if (strcmp(w, "seq") == 0) {
      c->flags |= SP_CL_SEQ;
    } else if (strcmp(w, "independent") == 0) {
      c->flags |= SP_CL_INDEPENDENT;
    } else if (strcmp(w, "auto") == 0) {
      c->flags |= SP_CL_AUTO;
    } else if (strcmp(w, "num_gangs") == 0 || strcmp(w, "num_teams") == 0) {
      c->num_gangs = sp_int_arg(arg);
    } else if (strcmp(w, "num_workers") == 0) {
      c->num_workers = sp_int_arg(arg);
    } else if (strcmp(w, "vector_length") == 0 || strcmp(w, "thread_limit") == 0) {
      c->vector_length = sp_int_arg(arg);
    } else if (strcmp(w, "collapse") == 0) {
      int64_t v = sp_int_arg(arg);
      c->collapse = v >= 1 && v <= SP_MAX_LOOPS ? (int)v : -1;
    } else if (strcmp(w, "tile") == 0 && arg) {
      char *save = NULL;
      for (char *tok = strtok_r(arg, ",", &save); tok && c->ntile < SP_MAX_LOOPS;
           tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok)) tok++;
        c->tile[c->ntile++] = *tok == '*' ? 0 : sp_int_arg(tok);
      }
    } else if (strcmp(w, "reduction") == 0 || strcmp(w, "private") == 0) {
      /* a directive may repeat the clause: reduction(+:a) reduction(max:b) */
      bool red = w[0] == 'r';
      char **dst = red ? &c->reduction : &c->private_vars;
      if (*dst && arg) {
        char *joined = sp_xasprintf("%s%s%s", *dst, red ? "; " : ", ", arg);
        if (joined) {
          free(*dst);
          *dst = joined;
        }
      } else if (arg) {
        *dst = arg;
        arg = NULL;
      }
    } else if (!sp_is_ignored_clause(w)) {
      sp_append_unknown(&d->unknown, w);
    }
    free(arg);
  }
}

bool sp_directive_parse(const char *text, sp_directive *out) {
  sp_lexer lx = {text};
  char w[64];
  if (!sp_next_word(&lx, w, sizeof w)) return false;
  sp_directive d;
  memset(&d, 0, sizeof d);
  if (strcmp(w, "acc") == 0) {
    if (!sp_next_word(&lx, w, sizeof w)) return false;
    bool loop = false;
    if (strcmp(w, "parallel") == 0 || strcmp(w, "kernels") == 0 || strcmp(w, "serial") == 0) {
      loop = sp_peek_word(&lx, "loop");
      if (loop) sp_next_word(&lx, (char[8]){0}, 8);
      if (w[0] == 'p') d.kind = loop ? SP_DIR_ACC_PARALLEL_LOOP : SP_DIR_ACC_PARALLEL;
      else if (w[0] == 'k') d.kind = loop ? SP_DIR_ACC_KERNELS_LOOP : SP_DIR_ACC_KERNELS;
      else d.kind = loop ? SP_DIR_ACC_SERIAL_LOOP : SP_DIR_ACC_SERIAL;
    } else if (strcmp(w, "loop") == 0) {
      d.kind = SP_DIR_ACC_LOOP;
    } else {
      d.kind = SP_DIR_OTHER;
    }
  } else if (strcmp(w, "omp") == 0) {
    bool target = false, loop = false, seen_any = false;
    sp_lexer save = lx;
    while (sp_next_word(&lx, w, sizeof w)) {
      if (strcmp(w, "target") == 0) target = true;
      else if (strcmp(w, "distribute") == 0 || strcmp(w, "for") == 0 || strcmp(w, "simd") == 0 ||
               strcmp(w, "loop") == 0)
        loop = true;
      else if (strcmp(w, "teams") == 0 || strcmp(w, "parallel") == 0)
        ;
      else {
        lx = save; /* first clause: rewind to it */
        break;
      }
      seen_any = true;
      save = lx;
    }
    if (!seen_any) return false;
    if (target) d.kind = loop ? SP_DIR_OMP_TARGET_LOOP : SP_DIR_OMP_TARGET;
    else d.kind = loop ? SP_DIR_OMP_LOOP : SP_DIR_OTHER;
    if (loop && d.kind != SP_DIR_OTHER) d.clauses.flags |= SP_CL_INDEPENDENT;
  } else {
    return false;
  }
  if (d.kind != SP_DIR_OTHER) sp_parse_clauses(&lx, &d);
  *out = d;
  return true;
}

const char *sp_directive_kind_name(sp_directive_kind k) {
  switch (k) {
    case SP_DIR_OTHER: return "other";
    case SP_DIR_ACC_PARALLEL: return "acc parallel";
    case SP_DIR_ACC_KERNELS: return "acc kernels";
    case SP_DIR_ACC_SERIAL: return "acc serial";
    case SP_DIR_ACC_PARALLEL_LOOP: return "acc parallel loop";
    case SP_DIR_ACC_KERNELS_LOOP: return "acc kernels loop";
    case SP_DIR_ACC_SERIAL_LOOP: return "acc serial loop";
    case SP_DIR_ACC_LOOP: return "acc loop";
    case SP_DIR_OMP_TARGET: return "omp target";
    case SP_DIR_OMP_TARGET_LOOP: return "omp target loop";
    case SP_DIR_OMP_LOOP: return "omp loop";
  }
  return "?";
}
