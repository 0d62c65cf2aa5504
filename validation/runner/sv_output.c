/* schedvalidate: output files. */
#include "sv_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sv_write_json_atomic(const json_t *obj, const char *path, bool force, char *err, size_t errlen) {
  if (!force && access(path, F_OK) == 0) {
    snprintf(err, errlen, "%s exists; use --force to replace it", path);
    return -1;
  }
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return snprintf(err, errlen, "out of memory"), -1;
  snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return -1;
  }
  int rc = json_dumpfd(obj, fd, JSON_INDENT(1) | JSON_ENSURE_ASCII);
  if (!rc) rc = write(fd, "\n", 1) == 1 ? 0 : -1;
  if (!rc) rc = fsync(fd);
  if (close(fd)) rc = -1;
  if (rc) snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
  else if (force) {
    if (rename(tmp, path)) rc = -1, snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
  } else if (link(tmp, path)) { /* link, not rename: never replaces a file that appeared meanwhile */
    rc = -1;
    snprintf(err, errlen, "cannot create %s: %s%s", path, strerror(errno),
             errno == EEXIST ? " (use --force to replace it)" : "");
  }
  unlink(tmp);
  free(tmp);
  return rc;
}

static int set_field(json_t *arch, const char *key, json_t *value, const char *source) {
  if (!value) return -1;
  json_t *f = json_pack("{s:o, s:s}", "value", value, "source", source);
  return f ? json_object_set_new(arch, key, f) : -1;
}

json_t *sv_arch_from_device(const json_t *tmpl, const json_t *device, char *err, size_t errlen) {
  const char *schema = json_string_value(json_object_get(tmpl, "schema"));
  if (!json_is_object(tmpl) || !schema || strcmp(schema, "schedpredict-arch/1")) {
    snprintf(err, errlen, "--arch-template: not an architecture file (\"schema\": \"schedpredict-arch/1\")");
    return NULL;
  }
  json_t *a = json_deep_copy(tmpl);
  const char *name = json_string_value(json_object_get(device, "name"));
  const char *drv = json_string_value(json_object_get(device, "driver"));
  char src[512];
  snprintf(src, sizeof src, "measured: on the device by schedvalidate (%s, driver %s, CUDA driver API %lld)",
           name ? name : "?", drv ? drv : "?",
           (long long)json_integer_value(json_object_get(device, "cuda_driver_version")));
  if (name) json_object_set_new(a, "full_name", json_string(name));
  static const struct {
    const char *arch, *dev;
  } k_ints[] = {{"sm_count", "sm_count"},
                {"warp_size", "warp_size"},
                {"max_threads_per_sm", "max_threads_per_sm"},
                {"max_blocks_per_sm", "max_blocks_per_sm"},
                {"max_threads_per_block", "max_threads_per_block"},
                {"registers_per_sm", "regs_per_sm"},
                {"shared_per_sm_bytes", "smem_per_sm"},
                {"shared_per_block_bytes", "smem_per_block_optin"},
                {"shared_reserved_per_block_bytes", "smem_reserved_per_block"},
                {"l2_bytes", "l2_bytes"},
                {"memory_bytes", "global_mem_bytes"}};
  int rc = 0;
  for (size_t i = 0; i < sizeof k_ints / sizeof k_ints[0]; i++) {
    const json_t *v = json_object_get(device, k_ints[i].dev);
    if (json_is_integer(v) && json_integer_value(v) >= 0)
      rc |= set_field(a, k_ints[i].arch, json_integer(json_integer_value(v)), src);
  }
  const json_t *v = json_object_get(device, "cc");
  if (json_is_string(v)) rc |= set_field(a, "compute_capability", json_string(json_string_value(v)), src);
  v = json_object_get(device, "sm_clock_mhz");
  if (json_is_integer(v) && json_integer_value(v) > 0)
    rc |= set_field(a, "clock_boost_mhz", json_real((double)json_integer_value(v)), src);
  v = json_object_get(device, "global_l1_cache");
  if (json_is_boolean(v)) rc |= set_field(a, "l1_caches_global_loads", json_boolean(json_is_true(v)), src);
  if (rc) {
    json_decref(a);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  return a;
}
