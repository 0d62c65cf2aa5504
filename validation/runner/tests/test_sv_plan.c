/* The plan reader: values of the hand-made plan, an error naming the JSON path for each kind of
   corruption, initial values and identities by hand, and no crash on truncated or mutated plans. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>

#include "sv_check.h"
#include "sv_plan.h"

static void test_valid_plan(void) {
  sv_plan p;
  char err[1024] = "";
  int rc = sv_plan_load(SV_PLAN_FILE, &p, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  if (rc) {
    fprintf(stderr, "%s\n", err);
    return;
  }
  CHECK_EQ_INT(p.n_kernels, 1);
  const sv_kernel *k = &p.kernels[0];
  CHECK_EQ_STR(k->id, "transpose.c:9");
  CHECK_EQ_STR(k->prelude, "#define N 256\n");
  CHECK_EQ_INT(k->n_arrays, 2);
  CHECK_EQ_STR(k->arrays[1].name, "b");
  CHECK_EQ_INT(k->arrays[1].bytes, 524288);
  CHECK(k->arrays[1].written && !k->arrays[0].written);
  CHECK(k->arrays[0].init == SV_INIT_FLOAT && k->arrays[0].type.kind == SV_NUM_FLOAT && k->arrays[0].type.size == 8);
  CHECK_EQ_INT(k->n_scalars, 1);
  double alpha;
  memcpy(&alpha, k->scalars[0].value, 8);
  CHECK_NEAR(alpha, 1.0, 0);
  CHECK_EQ_INT(k->n_params, 3);
  CHECK(k->params[0].kind == SV_PARAM_ARRAY && k->params[0].index == 0);
  CHECK(k->params[1].kind == SV_PARAM_ARRAY && k->params[1].index == 1);
  CHECK(k->params[2].kind == SV_PARAM_SCALAR && k->params[2].index == 0);
  CHECK_EQ_INT(k->n_cands, 2);
  CHECK_EQ_INT(k->reference, 0);
  CHECK_EQ_STR(k->cands[1].kernel_name, "sp_transpose_9_c1");
  CHECK_EQ_INT(k->cands[1].block[0], 32);
  CHECK_EQ_INT(k->cands[1].block[1], 8);
  CHECK_EQ_INT(k->cands[1].grid[1], 32);
  CHECK_EQ_INT(k->cands[1].model_rank, 2);
  sv_plan_free(&p);
}

/* Applies edit to the valid plan, parses it, and expects an error containing want. */
static void expect_error(void (*edit)(json_t *root), const char *want) {
  json_error_t je;
  json_t *root = json_load_file(SV_PLAN_FILE, 0, &je);
  CHECK(root != NULL);
  if (!root) return;
  edit(root);
  char *text = json_dumps(root, 0);
  json_decref(root);
  sv_plan p;
  char err[1024] = "";
  int rc = sv_plan_parse(text, strlen(text), "bad.json", &p, err, sizeof err);
  free(text);
  CHECK_EQ_INT(rc, -1);
  if (!rc) sv_plan_free(&p);
  sp_test_checks++;
  if (!strstr(err, want)) {
    sp_test_failures++;
    fprintf(stderr, "error message \"%s\" lacks \"%s\"\n", err, want);
  }
}

static json_t *kernel0(json_t *root) { return json_array_get(json_object_get(root, "kernels"), 0); }
static json_t *cand(json_t *root, size_t i) { return json_array_get(json_object_get(kernel0(root), "candidates"), i); }
static json_t *array(json_t *root, size_t i) { return json_array_get(json_object_get(kernel0(root), "arrays"), i); }

static void e_no_block(json_t *r) { json_object_del(cand(r, 1), "block"); }
static void e_zero_block(json_t *r) { json_array_set_new(json_object_get(cand(r, 0), "block"), 1, json_integer(0)); }
static void e_ref(json_t *r) { json_object_set_new(kernel0(r), "reference", json_integer(7)); }
static void e_param(json_t *r) { json_array_set_new(json_object_get(kernel0(r), "params"), 0, json_string("array:zz")); }
static void e_param_kind(json_t *r) { json_array_set_new(json_object_get(kernel0(r), "params"), 2, json_string("alpha")); }
static void e_version(json_t *r) { json_object_set_new(r, "schema_version", json_integer(2)); }
static void e_schema(json_t *r) { json_object_set_new(r, "schema", json_string("schedpredict-measurements")); }
static void e_init(json_t *r) { json_object_set_new(array(r, 0), "init", json_string("floaty")); }
static void e_bytes(json_t *r) { json_object_set_new(array(r, 1), "bytes", json_integer(524289)); }
static void e_bytes_type(json_t *r) { json_object_set_new(array(r, 1), "bytes", json_string("524288")); }
static void e_dup_cand(json_t *r) { json_object_set_new(cand(r, 1), "id", json_integer(0)); }
static void e_struct_float(json_t *r) { json_object_set_new(array(r, 0), "elem_type", json_string("struct point")); }
static void e_int_for_double(json_t *r) { json_object_set_new(array(r, 0), "init", json_string("int")); }
static void e_name_missing(json_t *r) { json_object_set_new(cand(r, 0), "kernel_name", json_string("other_name")); }
static void e_kernels(json_t *r) { json_object_set_new(r, "kernels", json_object()); }
static void e_scalar_type(json_t *r) {
  json_object_set_new(json_array_get(json_object_get(kernel0(r), "scalars"), 0), "type", json_string("quaternion"));
}
static void e_red_op(json_t *r) {
  json_array_append_new(json_object_get(kernel0(r), "reductions"),
                        json_pack("{s:s, s:s, s:s}", "name", "s", "type", "double", "op", "xor"));
}
static void e_dup_kernel(json_t *r) {
  json_array_append_new(json_object_get(r, "kernels"), json_deep_copy(kernel0(r)));
}

static void test_errors_name_the_path(void) {
  expect_error(e_no_block, "bad.json: $.kernels[0].candidates[1].block: missing");
  expect_error(e_zero_block, "$.kernels[0].candidates[0].block[1]: expected an integer in [1,");
  expect_error(e_ref, "$.kernels[0].reference: 7 is the id of none of the candidates");
  expect_error(e_param, "$.kernels[0].params[0]: \"array:zz\" names no entry");
  expect_error(e_param_kind, "$.kernels[0].params[2]: \"alpha\" is not \"array:NAME\"");
  expect_error(e_version, "$.schema_version: 2 is newer than this runner reads");
  expect_error(e_schema, "$.schema: \"schedpredict-measurements\" is not a plan");
  expect_error(e_init, "$.kernels[0].arrays[0].init: expected \"float\", \"int\" or \"bytes\"");
  expect_error(e_bytes, "$.kernels[0].arrays[1].bytes: 524289 is not a multiple of elem_size 8");
  expect_error(e_bytes_type, "$.kernels[0].arrays[1].bytes: expected an integer, got a string");
  expect_error(e_dup_cand, "$.kernels[0].candidates[1].id: 0 repeats the id of candidates[0]");
  expect_error(e_struct_float, "$.kernels[0].arrays[0].elem_type: \"struct point\" with elem_size 8 is not");
  expect_error(e_int_for_double, "$.kernels[0].arrays[0].init: \"int\" does not fit elem_type \"double\"");
  expect_error(e_name_missing, "$.kernels[0].candidates[0].source: does not mention the kernel_name");
  expect_error(e_kernels, "$.kernels: expected an array, got an object");
  expect_error(e_scalar_type, "$.kernels[0].scalars[0].type: unknown scalar type \"quaternion\"");
  expect_error(e_red_op, "$.kernels[0].reductions[0].op: unknown operator \"xor\"");
  expect_error(e_dup_kernel, "$.kernels[1].id: \"transpose.c:9\" repeats the id of kernels[0]");
}

static void test_syntax_and_file_errors(void) {
  sv_plan p;
  char err[1024] = "";
  const char *text = "{\n  \"schema\": \"schedpredict-plan\",\n  \"kernels\": [ }\n";
  CHECK_EQ_INT(sv_plan_parse(text, strlen(text), "cut.json", &p, err, sizeof err), -1);
  CHECK(!strncmp(err, "cut.json:3:", 11));
  CHECK_EQ_INT(sv_plan_load("tests/inputs/plans/no_such_plan.json", &p, err, sizeof err), -1);
  CHECK(strstr(err, "no_such_plan.json: cannot open the plan: No such file") != NULL);
}

static void test_ctypes(void) {
  sv_ctype t;
  CHECK(!sv_ctype_parse("const double", &t) && t.kind == SV_NUM_FLOAT && t.size == 8);
  CHECK(!sv_ctype_parse("long int", &t) && t.kind == SV_NUM_SIGNED && t.size == 8);
  CHECK(!sv_ctype_parse("unsigned int", &t) && t.kind == SV_NUM_UNSIGNED && t.size == 4);
  CHECK(!sv_ctype_parse("uint16_t", &t) && t.kind == SV_NUM_UNSIGNED && t.size == 2);
  CHECK(sv_ctype_parse("struct p", &t) == -1);
  CHECK(sv_ctype_parse("int*", &t) == -1);
}

/* FORMATS.md's initial values, computed by hand: 2654435761 mod 1024 = 433, 40503 mod 1024 = 567. */
static void test_init_values(void) {
  sv_array a = {.elem_size = 8, .type = {SV_NUM_FLOAT, 8}, .init = SV_INIT_FLOAT};
  double d;
  sv_init_value(&a, 0, 0, (unsigned char *)&d);
  CHECK_NEAR(d, 0.5, 0);
  sv_init_value(&a, 0, 1, (unsigned char *)&d);
  CHECK_NEAR(d, 0.5 + 433.0 / 1024, 0);
  sv_init_value(&a, 1, 0, (unsigned char *)&d);
  CHECK_NEAR(d, 0.5 + 567.0 / 1024, 0);
  /* e = 2^40: e * 2654435761 overflows 64 bits; 2^40 mod 1024 = 0, so the value is p's part. */
  sv_init_value(&a, 1, UINT64_C(1) << 40, (unsigned char *)&d);
  CHECK_NEAR(d, 0.5 + 567.0 / 1024, 0);
  sv_array f = {.elem_size = 4, .type = {SV_NUM_FLOAT, 4}, .init = SV_INIT_FLOAT};
  float x;
  sv_init_value(&f, 0, 1, (unsigned char *)&x);
  CHECK_NEAR(x, 0.5 + 433.0 / 1024, 0);
  /* int, bound 10: (3 * 2654435761 + 2) mod 10 = 7963307285 mod 10 = 5 */
  sv_array i = {.elem_size = 4, .type = {SV_NUM_SIGNED, 4}, .init = SV_INIT_INT, .index_bound = 10};
  int32_t v;
  sv_init_value(&i, 2, 3, (unsigned char *)&v);
  CHECK_EQ_INT(v, 5);
  /* no bound: mod 7; 2654435761 mod 7 = 2654435761 - 7 * 379205108 = 5; e = 1, p = 0 -> 5 */
  i.index_bound = 0;
  sv_init_value(&i, 0, 1, (unsigned char *)&v);
  CHECK_EQ_INT(v, 5);
  sv_array i8 = {.elem_size = 1, .type = {SV_NUM_UNSIGNED, 1}, .init = SV_INIT_INT, .index_bound = 200};
  uint8_t u8;
  sv_init_value(&i8, 0, 1, &u8); /* 2654435761 mod 200 = 161 */
  CHECK_EQ_INT(u8, 161);
  sv_array b = {.elem_size = 12, .init = SV_INIT_BYTES};
  unsigned char by;
  sv_init_value(&b, 1, 5, &by); /* 0x3e + (5 * 131 + 1) mod 3 = 0x3e + 656 mod 3 = 0x3e + 2 */
  CHECK_EQ_INT(by, 0x40);
  /* every double made of such bytes is normal and moderate */
  for (int k = 0; k < 4096; k += 8) {
    unsigned char d8[8];
    for (int j = 0; j < 8; j++) sv_init_value(&b, 3, (uint64_t)(k + j), &d8[j]);
    double dv;
    memcpy(&dv, d8, 8);
    CHECK(isnormal(dv) && dv > 3e-9 && dv < 33);
  }
}

static void test_identities(void) {
  unsigned char o[8];
  double d;
  sv_red_identity(SV_OP_MAX, (sv_ctype){SV_NUM_FLOAT, 8}, o);
  memcpy(&d, o, 8);
  CHECK(isinf(d) && d < 0);
  sv_red_identity(SV_OP_MIN, (sv_ctype){SV_NUM_FLOAT, 8}, o);
  memcpy(&d, o, 8);
  CHECK(isinf(d) && d > 0);
  float f;
  sv_red_identity(SV_OP_MUL, (sv_ctype){SV_NUM_FLOAT, 4}, o);
  memcpy(&f, o, 4);
  CHECK_NEAR(f, 1.0, 0);
  int32_t i;
  sv_red_identity(SV_OP_MIN, (sv_ctype){SV_NUM_SIGNED, 4}, o);
  memcpy(&i, o, 4);
  CHECK_EQ_INT(i, INT32_MAX);
  sv_red_identity(SV_OP_MAX, (sv_ctype){SV_NUM_SIGNED, 4}, o);
  memcpy(&i, o, 4);
  CHECK_EQ_INT(i, INT32_MIN);
  int64_t l;
  sv_red_identity(SV_OP_MAX, (sv_ctype){SV_NUM_SIGNED, 8}, o);
  memcpy(&l, o, 8);
  CHECK(l == INT64_MIN);
  uint16_t u;
  sv_red_identity(SV_OP_MIN, (sv_ctype){SV_NUM_UNSIGNED, 2}, o);
  memcpy(&u, o, 2);
  CHECK_EQ_INT(u, 65535);
  sv_red_identity(SV_OP_ADD, (sv_ctype){SV_NUM_SIGNED, 8}, o);
  memcpy(&l, o, 8);
  CHECK_EQ_INT(l, 0);
}

static void feed(const char *text, size_t n, int *accepted, int *refused, int *bad_msg) {
  sv_plan p;
  char err[1024];
  if (!sv_plan_parse(text, n, "fuzz.json", &p, err, sizeof err)) {
    ++*accepted;
    sv_plan_free(&p);
  } else {
    ++*refused;
    *bad_msg += strncmp(err, "fuzz.json", 9) != 0;
  }
}

/* Every prefix of the plan, and many random byte mutations: the reader must either accept the
   text or name the file in its message, never crash (the sanitized build checks memory). */
static void test_truncated_and_mutated(void) {
  size_t len;
  char *text = sv_read_file(SV_PLAN_FILE, &len);
  CHECK(text != NULL);
  if (!text) return;
  int accepted = 0, refused = 0, bad_msg = 0;
  size_t whole = (size_t)(strrchr(text, '}') - text) + 1; /* without the final newline */
  for (size_t n = 0; n < whole; n++) feed(text, n, &accepted, &refused, &bad_msg);
  CHECK_EQ_INT(accepted, 0); /* no proper prefix of a JSON object is a whole one */
  static const char k_bytes[] = "{}[]\",:0123456789-.eEtfn \\xa";
  uint64_t s = 88172645463325252u;
  char *m = malloc(len + 1);
  for (int round = 0; round < 20000 && m; round++) {
    memcpy(m, text, len + 1);
    for (int edits = 1 + round % 3; edits > 0; edits--) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      m[s % len] = k_bytes[(s >> 32) % (sizeof k_bytes - 1)];
    }
    feed(m, len, &accepted, &refused, &bad_msg);
  }
  free(m);
  free(text);
  CHECK(refused > 10000);
  CHECK_EQ_INT(bad_msg, 0);
}

int main(void) {
  SP_RUN(test_valid_plan);
  SP_RUN(test_errors_name_the_path);
  SP_RUN(test_syntax_and_file_errors);
  SP_RUN(test_ctypes);
  SP_RUN(test_init_values);
  SP_RUN(test_identities);
  SP_RUN(test_truncated_and_mutated);
  return SP_TEST_END();
}
