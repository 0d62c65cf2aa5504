/* Candidate selection: --shard partitions the plan, the reference runs first, --kernel and
   --candidates filter, and the option parsers refuse what they should. */
#include <jansson.h>

#include "sv_check.h"
#include "sv_select.h"

/* Two kernels: "k1" with candidate ids 10 11 12 (reference 11), "k2" with 20 21 22 23
   (reference 23). Plan positions: 10:0 11:1 12:2 20:3 21:4 22:5 23:6. */
static int make_plan(sv_plan *p) {
  json_error_t je;
  json_t *root = json_load_file(SV_PLAN_FILE, 0, &je);
  if (!root) return -1;
  json_t *ks = json_object_get(root, "kernels"), *k1 = json_array_get(ks, 0);
  json_t *c0 = json_deep_copy(json_array_get(json_object_get(k1, "candidates"), 0));
  json_t *k2 = json_deep_copy(k1);
  const int ids1[] = {10, 11, 12}, ids2[] = {20, 21, 22, 23};
  json_t *l1 = json_array(), *l2 = json_array();
  for (int i = 0; i < 3; i++) {
    json_t *c = json_deep_copy(c0);
    json_object_set_new(c, "id", json_integer(ids1[i]));
    json_array_append_new(l1, c);
  }
  for (int i = 0; i < 4; i++) {
    json_t *c = json_deep_copy(c0);
    json_object_set_new(c, "id", json_integer(ids2[i]));
    json_array_append_new(l2, c);
  }
  json_object_set_new(k1, "id", json_string("k1"));
  json_object_set_new(k1, "candidates", l1);
  json_object_set_new(k1, "reference", json_integer(11));
  json_object_set_new(k2, "id", json_string("k2"));
  json_object_set_new(k2, "candidates", l2);
  json_object_set_new(k2, "reference", json_integer(23));
  json_array_append_new(ks, k2);
  json_decref(c0);
  char *text = json_dumps(root, 0), err[512];
  json_decref(root);
  int rc = sv_plan_parse(text, strlen(text), "sel.json", p, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  free(text);
  return rc;
}

static int64_t id_of(const sv_plan *p, sv_item it) { return p->kernels[it.kernel].cands[it.cand].id; }

/* The selected ids in run order, as "11 10 12 | 23 20 ..." */
static void ids(const sv_plan *p, const sv_selection *s, char *buf, size_t len) {
  sv_item *items;
  char err[256];
  long n = sv_select(p, s, &items, err, sizeof err);
  buf[0] = 0;
  if (n < 0) {
    snprintf(buf, len, "error: %.200s", err);
    return;
  }
  size_t at = 0;
  for (long i = 0; i < n; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? " " : "", (long long)id_of(p, items[i]));
  free(items);
}

static void test_order_and_shards(void) {
  sv_plan p;
  CHECK_EQ_INT(make_plan(&p), 0);
  char buf[256];
  sv_selection all = {1, 1, NULL, NULL, 0};
  ids(&p, &all, buf, sizeof buf);
  CHECK_EQ_STR(buf, "11 10 12 23 20 21 22");
  /* positions mod 3: shard 1 = {0,3,6} = 10 20 23, shard 2 = {1,4} = 11 21, shard 3 = {2,5} = 12 22 */
  sv_selection s1 = {1, 3, NULL, NULL, 0}, s2 = {2, 3, NULL, NULL, 0}, s3 = {3, 3, NULL, NULL, 0};
  ids(&p, &s1, buf, sizeof buf);
  CHECK_EQ_STR(buf, "10 23 20");
  ids(&p, &s2, buf, sizeof buf);
  CHECK_EQ_STR(buf, "11 21");
  ids(&p, &s3, buf, sizeof buf);
  CHECK_EQ_STR(buf, "12 22");
  /* Property: for every N, the shards partition the plan. */
  for (unsigned n = 1; n <= 9; n++) {
    int seen[7] = {0};
    for (unsigned k = 1; k <= n; k++) {
      sv_selection s = {k, n, NULL, NULL, 0};
      sv_item *items;
      char err[64];
      long m = sv_select(&p, &s, &items, err, sizeof err);
      for (long i = 0; i < m; i++) seen[items[i].kernel ? 3 + items[i].cand : items[i].cand]++;
      free(items);
    }
    for (int i = 0; i < 7; i++) CHECK_EQ_INT(seen[i], 1);
  }
  sv_plan_free(&p);
}

static void test_filters(void) {
  sv_plan p;
  CHECK_EQ_INT(make_plan(&p), 0);
  char buf[256];
  sv_selection k2 = {1, 1, "k2", NULL, 0};
  ids(&p, &k2, buf, sizeof buf);
  CHECK_EQ_STR(buf, "23 20 21 22");
  int64_t want[] = {21, 12, 99};
  sv_selection c = {1, 1, NULL, want, 3};
  ids(&p, &c, buf, sizeof buf);
  CHECK_EQ_STR(buf, "12 21");
  sv_selection both = {2, 2, "k2", want, 3}; /* 21 is at position 4: not in shard 2/2 */
  ids(&p, &both, buf, sizeof buf);
  CHECK_EQ_STR(buf, "");
  sv_selection none = {1, 1, "k9", NULL, 0};
  ids(&p, &none, buf, sizeof buf);
  CHECK_EQ_STR(buf, "error: --kernel 'k9': the plan has no kernel with this id");
  sv_plan_free(&p);
}

static void test_parsers(void) {
  unsigned k, n;
  char err[256];
  CHECK(!sv_parse_shard("2/3", &k, &n, err, sizeof err) && k == 2 && n == 3);
  CHECK(!sv_parse_shard("1/1", &k, &n, err, sizeof err) && k == 1 && n == 1);
  CHECK_EQ_INT(sv_parse_shard("0/3", &k, &n, err, sizeof err), -1);
  CHECK(strstr(err, "expected K/N") != NULL);
  CHECK_EQ_INT(sv_parse_shard("4/3", &k, &n, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_shard("2/x", &k, &n, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_shard("2", &k, &n, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_shard("2/3/4", &k, &n, err, sizeof err), -1);
  int64_t *ids_;
  size_t m;
  CHECK(!sv_parse_id_list("1,5,9", &ids_, &m, err, sizeof err) && m == 3 && ids_[0] == 1 && ids_[2] == 9);
  free(ids_);
  CHECK_EQ_INT(sv_parse_id_list("1,,2", &ids_, &m, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_id_list("", &ids_, &m, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_id_list("-1", &ids_, &m, err, sizeof err), -1);
  CHECK_EQ_INT(sv_parse_id_list("3,", &ids_, &m, err, sizeof err), -1);
  CHECK(strstr(err, "--candidates '3,'") != NULL);
}

int main(void) {
  SP_RUN(test_order_and_shards);
  SP_RUN(test_filters);
  SP_RUN(test_parsers);
  return SP_TEST_END();
}
