#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"

static json_t *sp_loc_json(const sp_srcloc *l) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s:%u:%u", l->file ? l->file : "?", l->line, l->col);
  return json_string(buf);
}

static json_t *sp_affine_json(const sp_affine *a, const sp_nest *n) {
  json_t *o = json_object();
  char text[512];
  sp_affine_format(text, sizeof text, a, n);
  json_object_set_new(o, "text", json_string(text));
  json_object_set_new(o, "constant", json_integer(a->constant));
  json_t *terms = json_object();
  for (int k = 0; k < n->nloops; k++)
    if (a->coef[k]) json_object_set_new(terms, n->loops[k].index, json_integer(a->coef[k]));
  json_object_set_new(o, "terms", terms);
  return o;
}

static void sp_set_arg(json_t *o, const char *key, int64_t v) {
  if (v > 0) json_object_set_new(o, key, json_integer(v));
  else if (v < 0) json_object_set_new(o, key, json_string("unresolved"));
}

static json_t *sp_clauses_json(const sp_clauses *c) {
  json_t *o = json_object();
  if (c->directive) {
    json_object_set_new(o, "directive", json_string(c->directive));
    json_object_set_new(o, "location", sp_loc_json(&c->directive_loc));
  }
  static const struct { unsigned flag; const char *name; } flags[] = {
      {SP_CL_GANG, "gang"}, {SP_CL_WORKER, "worker"}, {SP_CL_VECTOR, "vector"},
      {SP_CL_SEQ, "seq"}, {SP_CL_INDEPENDENT, "independent"}, {SP_CL_AUTO, "auto"}};
  json_t *f = json_array();
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
    if (c->flags & flags[i].flag) json_array_append_new(f, json_string(flags[i].name));
  json_object_set_new(o, "flags", f);
  sp_set_arg(o, "gang", c->gang_arg);
  sp_set_arg(o, "worker", c->worker_arg);
  sp_set_arg(o, "vector", c->vector_arg);
  sp_set_arg(o, "num_gangs", c->num_gangs);
  sp_set_arg(o, "num_workers", c->num_workers);
  sp_set_arg(o, "vector_length", c->vector_length);
  if (c->collapse) sp_set_arg(o, "collapse", c->collapse);
  if (c->ntile) {
    json_t *t = json_array();
    for (int i = 0; i < c->ntile; i++)
      json_array_append_new(t, c->tile[i] > 0 ? json_integer(c->tile[i]) : json_string("*"));
    json_object_set_new(o, "tile", t);
  }
  if (c->reduction) json_object_set_new(o, "reduction", json_string(c->reduction));
  if (c->private_vars) json_object_set_new(o, "private", json_string(c->private_vars));
  return o;
}

/* A loop's floating-point work per iteration, kinds with operations only; NULL when none. */
static json_t *sp_fp_work_json(const sp_fp_work *w) {
  json_t *ops = json_object(), *chain = json_object();
  for (int k = 0; k < SP_FP_KINDS; k++) {
    if (w->ops[k] > 0) json_object_set_new(ops, sp_fp_kind_name((sp_fp_kind)k), json_real(w->ops[k]));
    if (w->chain[k] > 0)
      json_object_set_new(chain, sp_fp_kind_name((sp_fp_kind)k), json_real(w->chain[k]));
  }
  if (json_object_size(ops) == 0) {
    json_decref(ops);
    json_decref(chain);
    return NULL;
  }
  json_t *o = json_object();
  json_object_set_new(o, "ops", ops);
  json_object_set_new(o, "chain", chain);
  return o;
}

static json_t *sp_nest_json(const sp_nest *n, int id) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_integer(id));
  json_object_set_new(o, "function", json_string(n->function ? n->function : "?"));
  json_object_set_new(o, "location", sp_loc_json(&n->loc));
  json_object_set_new(o, "construct", json_string(sp_construct_name(n->construct)));
  json_object_set_new(o, "construct_clauses", sp_clauses_json(&n->construct_clauses));
  json_object_set_new(o, "construct_sole_loop", json_boolean(n->construct_sole_loop));
  json_object_set_new(o, "band_iterations", json_real(n->band_iterations));
  json_object_set_new(o, "band_iterations_exact", json_boolean(n->band_iterations_exact));
  json_t *loops = json_array();
  for (int k = 0; k < n->nloops; k++) {
    const sp_loop *L = &n->loops[k];
    json_t *l = json_object();
    json_object_set_new(l, "id", json_integer(k));
    json_object_set_new(l, "index", json_string(L->index));
    json_object_set_new(l, "location", sp_loc_json(&L->loc));
    json_object_set_new(l, "parent", json_integer(L->parent));
    json_object_set_new(l, "depth", json_integer(L->depth));
    json_object_set_new(l, "band", json_boolean(L->band));
    json_object_set_new(l, "imperfect", json_boolean(L->imperfect));
    json_t *lower = sp_affine_json(&L->lower, n), *upper = sp_affine_json(&L->upper, n);
    json_object_set_new(lower, "source", json_string(L->lower_text ? L->lower_text : ""));
    json_object_set_new(upper, "source", json_string(L->upper_text ? L->upper_text : ""));
    json_object_set_new(l, "lower", lower);
    json_object_set_new(l, "upper_inclusive", upper);
    json_object_set_new(l, "step", json_integer(L->step));
    json_object_set_new(l, "trip_min", json_integer(L->trip_min));
    json_object_set_new(l, "trip_max", json_integer(L->trip_max));
    json_object_set_new(l, "parallel", json_boolean(L->parallel));
    json_object_set_new(l, "parallel_reason",
                        json_string(sp_parallel_reason_name(L->parallel_reason)));
    if (L->dependence) json_object_set_new(l, "dependence", json_string(L->dependence));
    if (L->collapsed_into >= 0)
      json_object_set_new(l, "collapsed_into", json_integer(L->collapsed_into));
    json_object_set_new(l, "clauses", sp_clauses_json(&L->clauses));
    json_t *fp = sp_fp_work_json(&L->fp);
    if (fp) json_object_set_new(l, "fp_work", fp);
    json_array_append_new(loops, l);
  }
  json_object_set_new(o, "loops", loops);
  json_t *arrays = json_array();
  for (int a = 0; a < n->narrays; a++) {
    const sp_array *A = &n->arrays[a];
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer(a));
    json_object_set_new(j, "name", json_string(A->name));
    json_object_set_new(j, "element_type", json_string(A->elem_type ? A->elem_type : "?"));
    json_object_set_new(j, "element_size", json_integer(A->elem_size));
    json_t *dims = json_array();
    for (int d = 0; d < A->ndims; d++)
      json_array_append_new(dims, A->dims[d] >= 0 ? json_integer(A->dims[d]) : json_null());
    json_object_set_new(j, "dims", dims);
    json_object_set_new(j, "total_bytes", json_integer(A->total_bytes));
    json_object_set_new(j, "size_from_access", json_boolean(A->size_from_access));
    json_object_set_new(j, "pointer", json_boolean(A->is_pointer));
    json_object_set_new(j, "location", sp_loc_json(&A->decl_loc));
    json_array_append_new(arrays, j);
  }
  json_object_set_new(o, "arrays", arrays);
  json_t *refs = json_array();
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *R = &n->refs[r];
    json_t *j = json_object();
    json_object_set_new(j, "array", json_string(n->arrays[R->array].name));
    json_object_set_new(j, "access", json_string(R->access == SP_WRITE ? "write" : "read"));
    if (R->compound) json_object_set_new(j, "compound", json_true());
    json_object_set_new(j, "text", json_string(R->text ? R->text : ""));
    json_object_set_new(j, "location", sp_loc_json(&R->loc));
    json_object_set_new(j, "offset", sp_affine_json(&R->offset, n));
    json_object_set_new(j, "size", json_integer(R->size));
    if (R->irregular) {
      json_object_set_new(j, "irregular", json_string(R->irregular_why));
      json_t *uses = json_array();
      for (int k = 0; k < n->nloops; k++)
        if (R->irregular_loops >> k & 1) json_array_append_new(uses, json_string(n->loops[k].index));
      json_object_set_new(j, "irregular_loops", uses);
      if (R->irregular_scale > 0) json_object_set_new(j, "irregular_scale", json_integer(R->irregular_scale));
    }
    json_t *ls = json_array();
    for (int i = 0; i < R->nloops; i++)
      json_array_append_new(ls, json_string(n->loops[R->loops[i]].index));
    json_object_set_new(j, "loops", ls);
    if (R->nguards) {
      /* the conjunction under "guards"; each negated group (the else branch of a conjunction) a
       * list of its own under "unless_all" */
      json_t *gs = json_array(), *unless = json_array(), *group = NULL;
      static const char *const cmp[] = {">= 0", "== 0", "!= 0"};
      for (int g = 0; g < R->nguards; g++) {
        char text[512];
        sp_affine_format(text, sizeof text, &R->guards[g].expr, n);
        const sp_guard *G = &R->guards[g];
        char *s = G->modulus ? sp_xasprintf("(%s) %% %lld %s %lld", text, (long long)G->modulus,
                                            G->cmp == SP_CMP_EQ0 ? "==" : "!=", (long long)G->remainder)
                             : sp_xasprintf("%s %s", text, cmp[G->cmp]);
        json_t *str = json_string(s ? s : "?");
        free(s);
        if (!R->guards[g].negated_group) {
          json_array_append_new(gs, str);
          continue;
        }
        if (!group || R->guards[g].negated_group != R->guards[g - 1].negated_group) {
          group = json_array();
          json_array_append_new(unless, group);
        }
        json_array_append_new(group, str);
      }
      json_object_set_new(j, "guards", gs);
      if (json_array_size(unless)) json_object_set_new(j, "unless_all", unless);
      else json_decref(unless);
      json_object_set_new(j, "guards_hold_share", json_real(1 - R->guard_excluded));
    }
    json_array_append_new(refs, j);
  }
  json_object_set_new(o, "references", refs);
  json_t *notes = json_array();
  for (int i = 0; i < n->nnotes; i++) {
    json_t *j = json_object();
    json_object_set_new(j, "location", sp_loc_json(&n->notes[i].loc));
    json_object_set_new(j, "message", json_string(n->notes[i].message));
    json_array_append_new(notes, j);
  }
  json_object_set_new(o, "notes", notes);
  return o;
}

char *sp_ir_to_json(const sp_program *p) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", json_string("schedpredict-ir"));
  json_object_set_new(root, "schema_version", json_integer(SP_IR_SCHEMA_VERSION));
  json_t *files = json_array();
  for (int i = 0; i < p->nfiles; i++) json_array_append_new(files, json_string(p->files[i]));
  json_object_set_new(root, "files", files);
  json_t *nests = json_array();
  for (int i = 0; i < p->nnests; i++) json_array_append_new(nests, sp_nest_json(&p->nests[i], i));
  json_object_set_new(root, "nests", nests);
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(root);
  return s;
}

static void sp_print_bytes(FILE *out, int64_t b) {
  if (b >= (1LL << 30)) fprintf(out, "%.1f GiB", (double)b / (1LL << 30));
  else if (b >= (1LL << 20)) fprintf(out, "%.1f MiB", (double)b / (1LL << 20));
  else if (b >= 1024) fprintf(out, "%.1f KiB", (double)b / 1024);
  else fprintf(out, "%lld B", (long long)b);
}

void sp_ir_print_summary(FILE *out, const sp_program *p) {
  if (!out) return;
  for (int i = 0; i < p->nnests; i++) {
    const sp_nest *n = &p->nests[i];
    fprintf(out, "%s:%u:%u: nest %d in %s() [%s], %.0f%s band iterations\n", n->loc.file,
            n->loc.line, n->loc.col, i, n->function, sp_construct_name(n->construct),
            n->band_iterations, n->band_iterations_exact ? "" : " (approx.)");
    for (int k = 0; k < n->nloops; k++) {
      const sp_loop *L = &n->loops[k];
      char lo[256], hi[256];
      sp_affine_format(lo, sizeof lo, &L->lower, n);
      sp_affine_format(hi, sizeof hi, &L->upper, n);
      fprintf(out, "  %*sloop %s = %s .. %s step %lld: %s (%s)%s", 2 * L->depth, "", L->index,
              lo, hi, (long long)L->step, L->parallel ? "parallel" : "sequential",
              sp_parallel_reason_name(L->parallel_reason), L->imperfect ? ", band (imperfect)" : L->band ? ", band" : "");
      if (L->trip_min == L->trip_max) fprintf(out, ", %lld iterations\n", (long long)L->trip_max);
      else fprintf(out, ", %lld..%lld iterations\n", (long long)L->trip_min,
                   (long long)L->trip_max);
    }
    for (int a = 0; a < n->narrays; a++) {
      const sp_array *A = &n->arrays[a];
      fprintf(out, "  array %s: %s", A->name, A->elem_type);
      for (int d = 0; d < A->ndims; d++)
        if (A->dims[d] >= 0) fprintf(out, "[%lld]", (long long)A->dims[d]);
        else fprintf(out, "[?]");
      fputs(", ", out);
      sp_print_bytes(out, A->total_bytes);
      fprintf(out, "%s\n", A->size_from_access ? " accessed" : "");
    }
    for (int r = 0; r < n->nrefs; r++) {
      const sp_ref *R = &n->refs[r];
      char off[512];
      sp_affine_format(off, sizeof off, &R->offset, n);
      char guarded[64] = "";
      if (R->nguards)
        snprintf(guarded, sizeof guarded, " (guarded: %.4g %% of iterations)",
                 100 * (1 - R->guard_excluded));
      fprintf(out, "  %-5s %-24s byte offset %s%s%s\n", R->access == SP_WRITE ? "write" : "read",
              R->text, off, guarded, R->irregular ? " (irregular)" : "");
    }
  }
}
