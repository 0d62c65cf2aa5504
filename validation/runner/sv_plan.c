/* schedvalidate: reads and checks plan.json (validation/FORMATS.md). Every error names the file
   and the JSON path of the value at fault. */
#include "sv_plan.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SV_PLAN_SCHEMA "schedpredict-plan"
#define SV_PLAN_MAJOR 1

typedef struct {
  const char *file;
  char *err;
  size_t errlen;
} rd;

static int bad(rd *r, const char *path, const char *key, const char *fmt, ...) {
  int k = snprintf(r->err, r->errlen, "%s: %s%s%s: ", r->file, path, key ? "." : "", key ? key : "");
  if (k < 0 || (size_t)k >= r->errlen) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
  va_end(ap);
  return -1;
}

static const char *jtype(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "an unknown JSON value";
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* A required member of type want (JSON_OBJECT, JSON_ARRAY, JSON_STRING). */
static const json_t *member(rd *r, const json_t *obj, const char *path, const char *key,
                            json_type want, const char *what) {
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    bad(r, path, key, "missing (expected %s)", what);
    return NULL;
  }
  if (json_typeof(v) != want) {
    bad(r, path, key, "expected %s, got %s", what, jtype(v));
    return NULL;
  }
  return v;
}

static int get_str(rd *r, const json_t *obj, const char *path, const char *key, bool required,
                   char **out) {
  *out = NULL;
  const json_t *v = json_object_get(obj, key);
  if (!v && !required) return 0;
  if (!(v = member(r, obj, path, key, JSON_STRING, "a string"))) return -1;
  if (!(*out = dup_str(json_string_value(v)))) return bad(r, path, key, "out of memory");
  return 0;
}

static int get_int(rd *r, const json_t *obj, const char *path, const char *key, int64_t lo,
                   int64_t hi, int64_t *out) {
  const json_t *v = json_object_get(obj, key);
  if (!v) return bad(r, path, key, "missing (expected an integer)");
  if (!json_is_integer(v)) return bad(r, path, key, "expected an integer, got %s", jtype(v));
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi)
    return bad(r, path, key, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo,
               (long long)hi);
  *out = x;
  return 0;
}

static int get_bool(rd *r, const json_t *obj, const char *path, const char *key, bool *out) {
  const json_t *v = json_object_get(obj, key);
  if (!v) return bad(r, path, key, "missing (expected true or false)");
  if (!json_is_boolean(v)) return bad(r, path, key, "expected true or false, got %s", jtype(v));
  *out = json_is_true(v);
  return 0;
}

static int get_dim3(rd *r, const json_t *obj, const char *path, const char *key, unsigned out[3]) {
  const json_t *v = member(r, obj, path, key, JSON_ARRAY, "an array of 3 positive integers");
  if (!v) return -1;
  if (json_array_size(v) != 3)
    return bad(r, path, key, "expected 3 integers, got %zu", json_array_size(v));
  for (size_t i = 0; i < 3; i++) {
    const json_t *e = json_array_get(v, i);
    if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > INT_MAX) {
      char sub[64];
      snprintf(sub, sizeof sub, "%s[%zu]", key, i);
      return bad(r, path, sub, "expected an integer in [1, %d], got %s", INT_MAX, jtype(e));
    }
    out[i] = (unsigned)json_integer_value(e);
  }
  return 0;
}

static const struct {
  const char *name;
  sv_ctype t;
} k_ctypes[] = {
    {"double", {SV_NUM_FLOAT, 8}},
    {"float", {SV_NUM_FLOAT, 4}},
    {"char", {SV_NUM_SIGNED, 1}},
    {"signed char", {SV_NUM_SIGNED, 1}},
    {"unsigned char", {SV_NUM_UNSIGNED, 1}},
    {"short", {SV_NUM_SIGNED, 2}},
    {"unsigned short", {SV_NUM_UNSIGNED, 2}},
    {"int", {SV_NUM_SIGNED, 4}},
    {"unsigned", {SV_NUM_UNSIGNED, 4}},
    {"unsigned int", {SV_NUM_UNSIGNED, 4}},
    {"long", {SV_NUM_SIGNED, 8}},
    {"unsigned long", {SV_NUM_UNSIGNED, 8}},
    {"long long", {SV_NUM_SIGNED, 8}},
    {"unsigned long long", {SV_NUM_UNSIGNED, 8}},
    {"size_t", {SV_NUM_UNSIGNED, 8}},
    {"ptrdiff_t", {SV_NUM_SIGNED, 8}},
    {"int8_t", {SV_NUM_SIGNED, 1}},
    {"uint8_t", {SV_NUM_UNSIGNED, 1}},
    {"int16_t", {SV_NUM_SIGNED, 2}},
    {"uint16_t", {SV_NUM_UNSIGNED, 2}},
    {"int32_t", {SV_NUM_SIGNED, 4}},
    {"uint32_t", {SV_NUM_UNSIGNED, 4}},
    {"int64_t", {SV_NUM_SIGNED, 8}},
    {"uint64_t", {SV_NUM_UNSIGNED, 8}},
};

int sv_ctype_parse(const char *name, sv_ctype *out) {
  /* "const double" and "long int" spell the same types. */
  char buf[64];
  const char *s = name;
  if (!strncmp(s, "const ", 6)) s += 6;
  size_t n = strlen(s);
  if (n >= sizeof buf) return -1;
  memcpy(buf, s, n + 1);
  if (n > 4 && !strcmp(buf + n - 4, " int") && strcmp(buf, "unsigned int")) buf[n - 4] = 0;
  for (size_t i = 0; i < sizeof k_ctypes / sizeof k_ctypes[0]; i++)
    if (!strcmp(buf, k_ctypes[i].name)) {
      *out = k_ctypes[i].t;
      return 0;
    }
  return -1;
}

static void store(sv_ctype t, double d, int64_t i, bool is_int, unsigned char out[8]) {
  memset(out, 0, 8);
  if (t.kind == SV_NUM_FLOAT) {
    double v = is_int ? (double)i : d;
    if (t.size == 8) memcpy(out, &v, 8);
    else {
      float f = (float)v;
      memcpy(out, &f, 4);
    }
    return;
  }
  uint64_t u = (uint64_t)i; /* two's complement: the low bytes are the narrower value */
  for (int k = 0; k < t.size; k++) out[k] = (unsigned char)(u >> (8 * k));
}

void sv_red_identity(sv_red_op op, sv_ctype t, unsigned char out[8]) {
  if (op == SV_OP_ADD) store(t, 0, 0, true, out);
  else if (op == SV_OP_MUL) store(t, 1, 1, true, out);
  else if (t.kind == SV_NUM_FLOAT) store(t, op == SV_OP_MAX ? -INFINITY : INFINITY, 0, false, out);
  else {
    int bits = 8 * t.size;
    int64_t lo, hi;
    if (t.kind == SV_NUM_SIGNED) {
      hi = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
      lo = -hi - 1;
    } else {
      lo = 0;
      hi = bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1); /* all ones */
    }
    store(t, 0, op == SV_OP_MAX ? lo : hi, true, out);
  }
}

/* (e * 2654435761 + add) mod m, exact for m < 2^32. */
static uint64_t hash_mod(uint64_t e, uint64_t add, uint64_t m) {
  return ((e % m) * (UINT64_C(2654435761) % m) + add % m) % m;
}

void sv_init_value(const sv_array *a, int p, uint64_t e, unsigned char *out) {
  unsigned char v[8];
  switch (a->init) {
  case SV_INIT_FLOAT:
    store(a->type, 0.5 + (double)hash_mod(e, (uint64_t)p * 40503u, 1024) / 1024.0, 0, false, v);
    memcpy(out, v, (size_t)a->elem_size);
    break;
  case SV_INIT_INT: {
    uint64_t b = a->index_bound > 0 ? (uint64_t)a->index_bound : 7;
    store(a->type, 0, (int64_t)hash_mod(e, (uint64_t)p, b), true, v);
    memcpy(out, v, (size_t)a->elem_size);
    break;
  }
  /* 0x3e-0x40 in every byte: each float or double field of a struct a moderate normal number
   * (FORMATS.md), not the infinities, NaNs and denormals of arbitrary bytes, whose arithmetic
   * takes the slow paths and is not what the kernel's real data would cost */
  case SV_INIT_BYTES: *out = (unsigned char)(0x3e + (e * 131 + (uint64_t)p) % 3); break;
  }
}

static int read_array(rd *r, const json_t *o, const char *path, sv_array *a) {
  int64_t x;
  if (!json_is_object(o)) return bad(r, path, NULL, "expected an object, got %s", jtype(o));
  if (get_str(r, o, path, "name", true, &a->name) || get_str(r, o, path, "elem_type", true, &a->elem_type))
    return -1;
  if (get_int(r, o, path, "elem_size", 1, 1 << 20, &x)) return -1;
  a->elem_size = (int)x;
  if (get_int(r, o, path, "bytes", 1, INT64_MAX, &a->bytes)) return -1;
  const json_t *init = member(r, o, path, "init", JSON_STRING, "\"float\", \"int\" or \"bytes\"");
  if (!init) return -1;
  const char *is = json_string_value(init);
  if (!strcmp(is, "float")) a->init = SV_INIT_FLOAT;
  else if (!strcmp(is, "int")) a->init = SV_INIT_INT;
  else if (!strcmp(is, "bytes")) a->init = SV_INIT_BYTES;
  else return bad(r, path, "init", "expected \"float\", \"int\" or \"bytes\", got \"%s\"", is);
  a->index_bound = 0;
  if (json_object_get(o, "index_bound") &&
      get_int(r, o, path, "index_bound", 0, UINT32_MAX, &a->index_bound))
    return -1;
  if (get_bool(r, o, path, "written", &a->written)) return -1;
  if (a->init == SV_INIT_BYTES) return 0;
  if (sv_ctype_parse(a->elem_type, &a->type) || a->type.size != a->elem_size)
    return bad(r, path, "elem_type",
               "\"%s\" with elem_size %d is not a %s type the runner can initialize; use "
               "\"init\": \"bytes\"",
               a->elem_type, a->elem_size, is);
  if ((a->init == SV_INIT_FLOAT) != (a->type.kind == SV_NUM_FLOAT))
    return bad(r, path, "init", "\"%s\" does not fit elem_type \"%s\"", is, a->elem_type);
  if (a->bytes % a->elem_size)
    return bad(r, path, "bytes", "%lld is not a multiple of elem_size %d", (long long)a->bytes,
               a->elem_size);
  return 0;
}

static int read_scalar(rd *r, const json_t *o, const char *path, sv_scalar *s) {
  if (!json_is_object(o)) return bad(r, path, NULL, "expected an object, got %s", jtype(o));
  char *type = NULL;
  if (get_str(r, o, path, "name", true, &s->name) || get_str(r, o, path, "type", true, &type))
    return -1;
  int rc = sv_ctype_parse(type, &s->type);
  if (rc) bad(r, path, "type", "unknown scalar type \"%s\"", type);
  free(type);
  if (rc) return -1;
  const json_t *v = json_object_get(o, "value");
  if (!v || !json_is_number(v))
    return bad(r, path, "value", "expected a number, got %s", v ? jtype(v) : "nothing");
  if (s->type.kind != SV_NUM_FLOAT && !json_is_integer(v))
    return bad(r, path, "value", "expected an integer for a scalar of integer type");
  store(s->type, json_number_value(v), json_is_integer(v) ? json_integer_value(v) : 0,
        json_is_integer(v), s->value);
  return 0;
}

static int read_reduction(rd *r, const json_t *o, const char *path, sv_reduction *d) {
  if (!json_is_object(o)) return bad(r, path, NULL, "expected an object, got %s", jtype(o));
  char *type = NULL, *op = NULL;
  if (get_str(r, o, path, "name", true, &d->name) || get_str(r, o, path, "type", true, &type))
    goto fail;
  if (sv_ctype_parse(type, &d->type)) {
    bad(r, path, "type", "unknown reduction type \"%s\"", type);
    goto fail;
  }
  if (get_str(r, o, path, "op", true, &op)) goto fail;
  if (!strcmp(op, "+")) d->op = SV_OP_ADD;
  else if (!strcmp(op, "*")) d->op = SV_OP_MUL;
  else if (!strcmp(op, "max")) d->op = SV_OP_MAX;
  else if (!strcmp(op, "min")) d->op = SV_OP_MIN;
  else {
    bad(r, path, "op", "unknown operator \"%s\" (expected +, *, max or min)", op);
    goto fail;
  }
  free(type);
  free(op);
  return 0;
fail:
  free(type);
  free(op);
  return -1;
}

static int read_candidate(rd *r, const json_t *o, const char *path, sv_candidate *c) {
  if (!json_is_object(o)) return bad(r, path, NULL, "expected an object, got %s", jtype(o));
  if (get_int(r, o, path, "id", 0, INT64_MAX, &c->id)) return -1;
  c->model_rank = 0;
  if (json_object_get(o, "model_rank") && get_int(r, o, path, "model_rank", 1, INT64_MAX, &c->model_rank))
    return -1;
  if (get_str(r, o, path, "kernel_name", true, &c->kernel_name) ||
      get_str(r, o, path, "source", true, &c->source) ||
      get_str(r, o, path, "pattern", false, &c->pattern))
    return -1;
  if (!c->kernel_name[0]) return bad(r, path, "kernel_name", "must not be empty");
  if (!strstr(c->source, c->kernel_name))
    return bad(r, path, "source", "does not mention the kernel_name \"%s\"", c->kernel_name);
  return get_dim3(r, o, path, "block", c->block) || get_dim3(r, o, path, "grid", c->grid) ? -1 : 0;
}

/* Allocates *out for the members of JSON array key and reads each with fn. */
#define READ_LIST(r, obj, path, key, out, n, fn)                                                   \
  do {                                                                                             \
    const json_t *list_ = member(r, obj, path, key, JSON_ARRAY, "an array");                       \
    if (!list_) return -1;                                                                         \
    *(n) = json_array_size(list_);                                                                 \
    *(out) = calloc(*(n) ? *(n) : 1, sizeof **(out));                                              \
    if (!*(out)) {                                                                                 \
      *(n) = 0;                                                                                    \
      return bad(r, path, key, "out of memory");                                                   \
    }                                                                                              \
    for (size_t i_ = 0; i_ < *(n); i_++) {                                                         \
      char sub_[160];                                                                              \
      snprintf(sub_, sizeof sub_, "%.100s.%s[%zu]", path, key, i_);                                    \
      if (fn(r, json_array_get(list_, i_), sub_, &(*(out))[i_])) return -1;                        \
    }                                                                                              \
  } while (0)

static int find_name(const char *name, const void *base, size_t n, size_t stride) {
  for (size_t i = 0; i < n; i++) {
    char *const *p = (char *const *)((const char *)base + i * stride);
    if (!strcmp(*p, name)) return (int)i;
  }
  return -1;
}

static int read_params(rd *r, const json_t *o, const char *path, sv_kernel *k) {
  const json_t *list = member(r, o, path, "params", JSON_ARRAY, "an array of \"array:NAME\", "
                                                                "\"scalar:NAME\" or \"reduction:NAME\"");
  if (!list) return -1;
  k->n_params = json_array_size(list);
  k->params = calloc(k->n_params ? k->n_params : 1, sizeof *k->params);
  if (!k->params) return bad(r, path, "params", "out of memory");
  for (size_t i = 0; i < k->n_params; i++) {
    char sub[64];
    snprintf(sub, sizeof sub, "params[%zu]", i);
    const json_t *e = json_array_get(list, i);
    if (!json_is_string(e)) return bad(r, path, sub, "expected a string, got %s", jtype(e));
    const char *s = json_string_value(e);
    int idx = -1;
    if (!strncmp(s, "array:", 6)) {
      k->params[i].kind = SV_PARAM_ARRAY;
      idx = !k->n_arrays ? -1 : find_name(s + 6, &k->arrays[0].name, k->n_arrays, sizeof(sv_array));
    } else if (!strncmp(s, "scalar:", 7)) {
      k->params[i].kind = SV_PARAM_SCALAR;
      idx = !k->n_scalars ? -1 : find_name(s + 7, &k->scalars[0].name, k->n_scalars, sizeof(sv_scalar));
    } else if (!strncmp(s, "reduction:", 10)) {
      k->params[i].kind = SV_PARAM_REDUCTION;
      idx = !k->n_reductions ? -1 : find_name(s + 10, &k->reductions[0].name, k->n_reductions, sizeof(sv_reduction));
    } else
      return bad(r, path, sub, "\"%s\" is not \"array:NAME\", \"scalar:NAME\" or \"reduction:NAME\"", s);
    if (idx < 0) return bad(r, path, sub, "\"%s\" names no entry of the kernel", s);
    k->params[i].index = idx;
  }
  return 0;
}

static int read_kernel(rd *r, const json_t *o, const char *path, sv_kernel *k) {
  if (!json_is_object(o)) return bad(r, path, NULL, "expected an object, got %s", jtype(o));
  if (get_str(r, o, path, "id", true, &k->id) || get_str(r, o, path, "cuda_prelude", true, &k->prelude))
    return -1;
  READ_LIST(r, o, path, "arrays", &k->arrays, &k->n_arrays, read_array);
  if (json_object_get(o, "scalars")) READ_LIST(r, o, path, "scalars", &k->scalars, &k->n_scalars, read_scalar);
  if (json_object_get(o, "reductions"))
    READ_LIST(r, o, path, "reductions", &k->reductions, &k->n_reductions, read_reduction);
  if (read_params(r, o, path, k)) return -1;
  READ_LIST(r, o, path, "candidates", &k->cands, &k->n_cands, read_candidate);
  if (!k->n_cands) return bad(r, path, "candidates", "is empty");
  for (size_t i = 0; i < k->n_cands; i++)
    for (size_t j = 0; j < i; j++)
      if (k->cands[i].id == k->cands[j].id) {
        char sub[64];
        snprintf(sub, sizeof sub, "candidates[%zu].id", i);
        return bad(r, path, sub, "%lld repeats the id of candidates[%zu]", (long long)k->cands[i].id, j);
      }
  int64_t ref;
  if (get_int(r, o, path, "reference", 0, INT64_MAX, &ref)) return -1;
  for (k->reference = 0; k->reference < k->n_cands; k->reference++)
    if (k->cands[k->reference].id == ref) return 0;
  return bad(r, path, "reference", "%lld is the id of none of the candidates", (long long)ref);
}

static int read_plan(rd *r, const json_t *root, sv_plan *p) {
  if (!json_is_object(root)) return bad(r, "$", NULL, "expected an object, got %s", jtype(root));
  const json_t *schema = member(r, root, "$", "schema", JSON_STRING, "\"" SV_PLAN_SCHEMA "\"");
  if (!schema) return -1;
  if (strcmp(json_string_value(schema), SV_PLAN_SCHEMA))
    return bad(r, "$", "schema", "\"%s\" is not a plan (expected \"" SV_PLAN_SCHEMA "\")",
               json_string_value(schema));
  int64_t ver;
  if (get_int(r, root, "$", "schema_version", 1, INT_MAX, &ver)) return -1;
  if (ver > SV_PLAN_MAJOR)
    return bad(r, "$", "schema_version", "%lld is newer than this runner reads (%d): update schedvalidate",
               (long long)ver, SV_PLAN_MAJOR);
  READ_LIST(r, root, "$", "kernels", &p->kernels, &p->n_kernels, read_kernel);
  for (size_t i = 0; i < p->n_kernels; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(p->kernels[i].id, p->kernels[j].id)) {
        char sub[64];
        snprintf(sub, sizeof sub, "kernels[%zu].id", i);
        return bad(r, "$", sub, "\"%s\" repeats the id of kernels[%zu]", p->kernels[i].id, j);
      }
  return 0;
}

int sv_plan_parse(const char *text, size_t len, const char *name, sv_plan *plan, char *err,
                  size_t errlen) {
  memset(plan, 0, sizeof *plan);
  rd r = {name, err, errlen};
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
    return -1;
  }
  int rc = read_plan(&r, root, plan);
  json_decref(root);
  if (!rc && !(plan->path = dup_str(name))) rc = bad(&r, "$", NULL, "out of memory");
  if (rc) sv_plan_free(plan);
  return rc;
}

int sv_plan_load(const char *path, sv_plan *plan, char *err, size_t errlen) {
  memset(plan, 0, sizeof *plan);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open the plan: %s", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  int rd_err = ferror(f);
  fclose(f);
  if (!buf || rd_err) {
    free(buf);
    snprintf(err, errlen, "%s: cannot read the plan%s", path, buf ? "" : ": out of memory");
    return -1;
  }
  int rc = sv_plan_parse(buf, n, path, plan, err, errlen);
  free(buf);
  return rc;
}

void sv_plan_free(sv_plan *p) {
  for (size_t i = 0; i < p->n_kernels; i++) {
    sv_kernel *k = &p->kernels[i];
    free(k->id);
    free(k->prelude);
    for (size_t j = 0; j < k->n_arrays; j++) {
      free(k->arrays[j].name);
      free(k->arrays[j].elem_type);
    }
    for (size_t j = 0; j < k->n_scalars; j++) free(k->scalars[j].name);
    for (size_t j = 0; j < k->n_reductions; j++) free(k->reductions[j].name);
    for (size_t j = 0; j < k->n_cands; j++) {
      free(k->cands[j].kernel_name);
      free(k->cands[j].source);
      free(k->cands[j].pattern);
    }
    free(k->arrays);
    free(k->scalars);
    free(k->reductions);
    free(k->params);
    free(k->cands);
  }
  free(p->kernels);
  free(p->path);
  memset(p, 0, sizeof *p);
}
