#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/internal.h"

struct sp_strpool {
  char **items;
  int n, cap;
};

const char *sp_strpool_intern(struct sp_strpool **poolp, const char *s) {
  if (!*poolp) {
    *poolp = calloc(1, sizeof **poolp);
    if (!*poolp) return NULL;
  }
  struct sp_strpool *pool = *poolp;
  for (int i = 0; i < pool->n; i++)
    if (strcmp(pool->items[i], s) == 0) return pool->items[i];
  if (pool->n == pool->cap) {
    int cap = pool->cap ? pool->cap * 2 : 8;
    char **items = realloc(pool->items, (size_t)cap * sizeof *items);
    if (!items) return NULL;
    pool->items = items;
    pool->cap = cap;
  }
  char *copy = strdup(s);
  if (!copy) return NULL;
  pool->items[pool->n++] = copy;
  return copy;
}

static void sp_strpool_free(struct sp_strpool *pool) {
  if (!pool) return;
  for (int i = 0; i < pool->n; i++) free(pool->items[i]);
  free(pool->items);
  free(pool);
}

void sp_clauses_free(sp_clauses *c) {
  free(c->reduction);
  free(c->private_vars);
  free(c->directive);
  memset(c, 0, sizeof *c);
}

void sp_codegen_free(sp_codegen *cg) {
  if (!cg) return;
  free(cg->body);
  for (int k = 0; k < SP_MAX_LOOPS; k++) free(cg->index_type[k]);
  for (int i = 0; i < cg->nvars; i++) {
    free(cg->vars[i].name);
    free(cg->vars[i].type);
    free(cg->vars[i].shape);
  }
  free(cg->vars);
  free(cg->prelude);
  free(cg->not_generated);
  free(cg);
}

void sp_nest_free(sp_nest *n) {
  free(n->function);
  sp_clauses_free(&n->construct_clauses);
  for (int i = 0; i < n->nloops; i++) {
    sp_loop *l = &n->loops[i];
    free(l->index);
    free(l->lower_text);
    free(l->upper_text);
    free(l->dependence);
    sp_clauses_free(&l->clauses);
  }
  for (int i = 0; i < n->narrays; i++) {
    free(n->arrays[i].name);
    free(n->arrays[i].elem_type);
  }
  free(n->arrays);
  for (int i = 0; i < n->nrefs; i++) {
    free(n->refs[i].irregular_why);
    free(n->refs[i].guards);
    free(n->refs[i].text);
  }
  free(n->refs);
  for (int i = 0; i < n->nnotes; i++) free(n->notes[i].message);
  free(n->notes);
  sp_codegen_free(n->codegen);
  memset(n, 0, sizeof *n);
}

void sp_program_free(sp_program *p) {
  for (int i = 0; i < p->nnests; i++) sp_nest_free(&p->nests[i]);
  free(p->nests);
  for (int i = 0; i < p->nfiles; i++) free(p->files[i]);
  free(p->files);
  sp_strpool_free(p->pool);
  memset(p, 0, sizeof *p);
}

const char *sp_construct_name(sp_construct c) {
  switch (c) {
    case SP_CONSTRUCT_ACC_PARALLEL: return "acc parallel";
    case SP_CONSTRUCT_ACC_KERNELS: return "acc kernels";
    case SP_CONSTRUCT_ACC_SERIAL: return "acc serial";
    case SP_CONSTRUCT_OMP_TARGET: return "omp target";
    case SP_CONSTRUCT_NONE: return "none";
  }
  return "?";
}

const char *sp_parallel_reason_name(sp_parallel_reason r) {
  switch (r) {
    case SP_PAR_DECLARED: return "declared";
    case SP_PAR_DECLARED_SEQ: return "declared-seq";
    case SP_PAR_DEFAULT_SEQ: return "default-seq";
    case SP_PAR_TEST_PROVED: return "dependence-test";
    case SP_PAR_TEST_DEPENDENT: return "dependence-test";
  }
  return "?";
}

char *sp_strdup_or_null(const char *s) { return s ? strdup(s) : NULL; }

char *sp_xasprintf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

bool sp_cg_atomic_add_native(const sp_cg_var *v) {
  static const char *const types[] = {"double", "float", "int", "unsigned int",
                                      "unsigned long long"};
  if (v->kind != SP_CG_REDUCTION || strcmp(v->op, "+") != 0 || !v->type) return false;
  for (size_t k = 0; k < sizeof types / sizeof *types; k++)
    if (strcmp(v->type, types[k]) == 0) return true;
  return false;
}
