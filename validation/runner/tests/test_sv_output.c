/* Output files: the architecture description made from a device description keeps the
   template's other fields and marks every measured figure's source; writes are atomic and
   refuse to replace a file without force. */
#include <jansson.h>
#include <unistd.h>

#include "sv_check.h"
#include "sv_output.h"

static json_t *fake_device(void) {
  return json_pack("{s:s, s:s, s:i, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:I, s:s, s:i, s:b}",
                   "name", "NVIDIA H100 80GB HBM3", "cc", "9.0", "sm_count", 132, "l2_bytes",
                   (json_int_t)52428800, "sm_clock_mhz", 1980, "warp_size", 32,
                   "max_threads_per_block", 1024, "max_threads_per_sm", 2048, "max_blocks_per_sm", 32,
                   "regs_per_sm", 65536, "smem_per_sm", 233472, "smem_per_block_optin", 232448,
                   "global_mem_bytes", (json_int_t)85017493504LL, "driver", "580.159.04",
                   "cuda_driver_version", 13000, "global_l1_cache", 1);
}

static void test_arch(void) {
  json_error_t je;
  json_t *tmpl = json_load_file("arch/h100.json", 0, &je);
  CHECK(tmpl != NULL);
  if (!tmpl) return;
  json_t *dev = fake_device();
  char err[512];
  json_t *a = sv_arch_from_device(tmpl, dev, "out/h100-measured.json", err, sizeof err);
  CHECK(a != NULL);
  if (a) {
    json_t *f = json_object_get(a, "sm_count");
    CHECK_EQ_INT(json_integer_value(json_object_get(f, "value")), 132);
    CHECK(!strncmp(json_string_value(json_object_get(f, "source")), "measured: on the device by schedvalidate", 40));
    CHECK(strstr(json_string_value(json_object_get(f, "source")), "580.159.04") != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(a, "shared_per_block_bytes"), "value")), 232448);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(a, "clock_boost_mhz"), "value")), 1980, 0);
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(a, "compute_capability"), "value")), "9.0");
    /* not reported by the device: the template's value and source stay */
    CHECK(json_equal(json_object_get(a, "l1_hit_latency_cycles"), json_object_get(tmpl, "l1_hit_latency_cycles")));
    CHECK_EQ_STR(json_string_value(json_object_get(a, "full_name")), "NVIDIA H100 80GB HBM3");
    CHECK_EQ_STR(json_string_value(json_object_get(a, "name")), "h100-measured");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(a, "max_warps_per_sm"), "value")), 64);
    CHECK(!strncmp(json_string_value(json_object_get(json_object_get(a, "max_warps_per_sm"), "source")),
                   "derived: max_threads_per_sm / warp_size, both on the device by schedvalidate", 74));
    /* ours first, then the template's */
    CHECK_EQ_INT(json_array_size(json_object_get(a, "notes")),
                 json_array_size(json_object_get(tmpl, "notes")) + 1);
    CHECK(!strncmp(json_string_value(json_array_get(json_object_get(a, "notes"), 0)),
                   "Written by schedvalidate", 24));
    /* the same L2 as the template's: its l2_reuse_bytes stays as it is */
    CHECK(json_equal(json_object_get(a, "l2_reuse_bytes"), json_object_get(tmpl, "l2_reuse_bytes")));
    json_t *b = sv_arch_from_device(tmpl, dev, "Device Arch.json", err, sizeof err);
    CHECK_EQ_STR(json_string_value(json_object_get(b, "name")), "h100"); /* not a valid name: the template's */
    json_decref(b);
    /* an L2 of 60 MiB (the H200's) on the H100's template keeps the template's share of it,
       35546624 / 52428800 of 62914560 = 42655948.8, down to a whole 32-byte sector */
    json_t *h200 = json_deep_copy(dev);
    json_object_set_new(h200, "l2_bytes", json_integer(62914560));
    json_t *c = sv_arch_from_device(tmpl, h200, NULL, err, sizeof err);
    json_t *r = json_object_get(c, "l2_reuse_bytes");
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "value")), 42655936);
    CHECK(!strncmp(json_string_value(json_object_get(r, "source")), "derived: the template's l2_reuse_bytes", 38));
    json_decref(c);
    json_decref(h200);
  }
  json_decref(a);
  json_t *notarch = json_pack("{s:s}", "schema", "schedpredict-plan");
  CHECK(sv_arch_from_device(notarch, dev, NULL, err, sizeof err) == NULL);
  CHECK(strstr(err, "not an architecture file") != NULL);
  json_decref(notarch);
  json_decref(dev);
  json_decref(tmpl);
}

static void test_atomic_write(void) {
  char dir[] = "/tmp/sv_out_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[128], err[512];
  snprintf(path, sizeof path, "%s/m.json", dir);
  json_t *one = json_pack("{s:i}", "x", 1), *two = json_pack("{s:i}", "x", 2);
  CHECK_EQ_INT(sv_write_json_atomic(one, path, false, err, sizeof err), 0);
  CHECK_EQ_INT(sv_write_json_atomic(two, path, false, err, sizeof err), -1);
  CHECK(strstr(err, "use --force") != NULL);
  json_error_t je;
  json_t *back = json_load_file(path, 0, &je);
  CHECK(json_equal(back, one));
  json_decref(back);
  CHECK_EQ_INT(sv_write_json_atomic(two, path, true, err, sizeof err), 0);
  back = json_load_file(path, 0, &je);
  CHECK(json_equal(back, two));
  json_decref(back);
  snprintf(path, sizeof path, "%s/no/such/dir/m.json", dir);
  CHECK_EQ_INT(sv_write_json_atomic(one, path, true, err, sizeof err), -1);
  CHECK(strstr(err, "cannot create") != NULL);
  json_decref(one);
  json_decref(two);
  snprintf(path, sizeof path, "%s/m.json", dir);
  unlink(path);
  CHECK_EQ_INT(rmdir(dir), 0); /* no temporary file left behind */
}

static void test_json_text(void) {
  json_t *a = sv_json_text("caf\xc3\xa9 ok"); /* valid UTF-8 stays */
  CHECK_EQ_STR(json_string_value(a), "caf\xc3\xa9 ok");
  json_t *b = sv_json_text("log cut \xc3"); /* half a character */
  CHECK_EQ_STR(json_string_value(b), "log cut ?");
  json_t *c = sv_json_text("\xff\xfe x");
  CHECK_EQ_STR(json_string_value(c), "?? x");
  json_decref(a);
  json_decref(b);
  json_decref(c);
}

int main(void) {
  SP_RUN(test_arch);
  SP_RUN(test_atomic_write);
  SP_RUN(test_json_text);
  return SP_TEST_END();
}
