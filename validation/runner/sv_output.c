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

/* The integer value of an architecture file's field, 0 if it has none. */
static json_int_t field_int(const json_t *arch, const char *key) {
  return json_integer_value(json_object_get(json_object_get(arch, key), "value"));
}

static int set_field(json_t *arch, const char *key, json_t *value, const char *source) {
  if (!value) return -1;
  json_t *f = json_pack("{s:o, s:s}", "value", value, "source", source);
  return f ? json_object_set_new(arch, key, f) : -1;
}

/* NAME of .../NAME.json when it is a valid architecture name (traces/arch.c's rule: 1-31 of
   a-z 0-9 _ - ., starting with a letter or digit), else NULL. */
static char *arch_name_of(const char *path, char *buf, size_t len) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && !strcmp(base + n - 5, ".json")) n -= 5;
  if (n == 0 || n >= len || n > 31) return NULL;
  for (size_t i = 0; i < n; i++) {
    char c = base[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-' || c == '.'))))
      return NULL;
  }
  memcpy(buf, base, n);
  buf[n] = 0;
  return buf;
}

json_t *sv_arch_from_device(const json_t *tmpl, const json_t *device, const char *out_path,
                            char *err, size_t errlen) {
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
  char nb[64];
  if (out_path && arch_name_of(out_path, nb, sizeof nb)) json_object_set_new(a, "name", json_string(nb));
  json_t *notes = json_object_get(a, "notes");
  if (!json_is_array(notes)) {
    json_t *old_note = json_is_string(notes) ? json_incref(notes) : NULL;
    json_object_set_new(a, "notes", notes = json_array());
    if (old_note) json_array_append_new(notes, old_note);
  }
  json_array_insert_new(notes, 0, json_string("Written by schedvalidate --write-arch: the figures marked "
                                              "'measured: on the device by schedvalidate' come from the "
                                              "device, the others from the template."));
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
  /* the template's share of its L2 kept for reuse (a probe's figure, not reported by the
     device), applied to the device's L2: another L2 size keeps the same share */
  const json_t *dev_l2 = json_object_get(device, "l2_bytes");
  const json_int_t t_l2 = field_int(tmpl, "l2_bytes"), t_reuse = field_int(tmpl, "l2_reuse_bytes"),
                   sector = field_int(tmpl, "l2_sector_bytes");
  if (json_is_integer(dev_l2) && json_integer_value(dev_l2) > 0 && t_l2 > 0 && t_reuse > 0 &&
      sector > 0 && json_integer_value(dev_l2) != t_l2) {
    double share = (double)t_reuse / (double)t_l2;
    json_int_t reuse = (json_int_t)(share * (double)json_integer_value(dev_l2) / (double)sector) * sector;
    char d[640];
    snprintf(d, sizeof d, "derived: the template's l2_reuse_bytes / l2_bytes (%.3f) times l2_bytes, %s",
             share, src + strlen("measured: "));
    rc |= set_field(a, "l2_reuse_bytes", json_integer(reuse), d);
  }
  const json_t *v = json_object_get(device, "cc");
  if (json_is_string(v)) rc |= set_field(a, "compute_capability", json_string(json_string_value(v)), src);
  v = json_object_get(device, "sm_clock_mhz");
  if (json_is_integer(v) && json_integer_value(v) > 0)
    rc |= set_field(a, "clock_boost_mhz", json_real((double)json_integer_value(v)), src);
  const json_t *thr = json_object_get(device, "max_threads_per_sm"), *ws = json_object_get(device, "warp_size");
  if (json_integer_value(thr) > 0 && json_integer_value(ws) > 0) {
    char d[600];
    snprintf(d, sizeof d, "derived: max_threads_per_sm / warp_size, both %s", src + strlen("measured: "));
    rc |= set_field(a, "max_warps_per_sm", json_integer(json_integer_value(thr) / json_integer_value(ws)), d);
  }
    v = json_object_get(device, "global_l1_cache");
  if (json_is_boolean(v)) rc |= set_field(a, "l1_caches_global_loads", json_boolean(json_is_true(v)), src);
  if (rc) {
    json_decref(a);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  return a;
}

json_t *sv_json_text(const char *text) {
  json_t *j = json_string(text ? text : "");
  if (j) return j;
  char *copy = strdup(text);
  if (!copy) return NULL;
  /* Keep ASCII, replace the rest: simple and always valid. */
  for (char *c = copy; *c; c++)
    if ((unsigned char)*c >= 0x80) *c = '?';
  j = json_string(copy);
  free(copy);
  return j;
}
