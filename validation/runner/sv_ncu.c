/* schedvalidate: Nsight Compute CLI backend and its CSV reader. */
#include "sv_ncu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_metrics.h"
#include "sv_proc.h"

#define SV_CSV_MAX_FIELDS 64

/* Splits one CSV record starting at *p into fields (quotes removed, "" unescaped, in place).
   Advances *p past the line end. Returns the field count. */
static int csv_record(char **p, char **fields, int max) {
  char *s = *p, *w = s;
  int n = 0;
  fields[n++] = w;
  bool quoted = false;
  for (;; s++) {
    char ch = *s;
    if (quoted) {
      if (ch == '"' && s[1] == '"') {
        *w++ = '"';
        s++;
      } else if (ch == '"') quoted = false;
      else if (!ch) break;
      else *w++ = ch;
      continue;
    }
    if (ch == '"') quoted = true;
    else if (ch == ',') {
      *w++ = 0;
      if (n < max) fields[n++] = w;
    } else if (ch == '\n' || ch == '\r' || !ch) break;
    else *w++ = ch;
  }
  char end = *s;
  *w = 0;
  if (end == '\r' && s[1] == '\n') s++;
  *p = end ? s + 1 : s;
  return n;
}

/* "1,234.5" -> 1234.5; scaled by the unit to the base unit (bytes, ns, counts). */
static int parse_value(const char *v, const char *unit, double *out) {
  char buf[128];
  size_t n = 0;
  for (const char *s = v; *s && n + 1 < sizeof buf; s++)
    if (*s != ',' && !isspace((unsigned char)*s)) buf[n++] = *s;
  buf[n] = 0;
  if (!n || !strcmp(buf, "n/a")) return -1;
  char *end;
  double d = strtod(buf, &end);
  if (*end) return -1;
  static const struct {
    const char *unit;
    double scale;
  } k_units[] = {{"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"Tbyte", 1e12},
                 {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"usecond", 1e3}, {"msecond", 1e6},
                 {"second", 1e9}, {"us", 1e3}, {"ms", 1e6}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}};
  if (unit)
    for (size_t i = 0; i < sizeof k_units / sizeof k_units[0]; i++)
      if (!strcmp(unit, k_units[i].unit)) {
        d *= k_units[i].scale;
        break;
      }
  *out = d;
  return 0;
}

static int column(char **f, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(f[i], name)) return i;
  return -1;
}

/* "sp_k" matches "sp_k" and, should ncu print parameters, "sp_k(double const*, ...)". */
static bool same_kernel(const char *field, const char *name) {
  size_t n = strlen(name);
  return !strncmp(field, name, n) && (!field[n] || field[n] == '(');
}

int sv_ncu_parse_csv(const char *text, const char *kernel_name, const char *const *metrics,
                     size_t n_metrics, double *values, bool *found, char *err, size_t errlen) {
  for (size_t i = 0; i < n_metrics; i++) found[i] = false;
  char *copy = strdup(text), *p = copy;
  if (!copy) return snprintf(err, errlen, "out of memory"), -1;
  char *f[SV_CSV_MAX_FIELDS];
  int c_kernel = -1, c_name = -1, c_unit = -1, c_value = -1, nh = 0, n_found = 0;
  while (*p) {
    if (*p != '"') { /* not CSV: ncu's ==PROF== lines, the program's output */
      p += strcspn(p, "\n");
      if (*p) p++;
      continue;
    }
    int n = csv_record(&p, f, SV_CSV_MAX_FIELDS);
    if (c_name < 0) {
      c_name = column(f, n, "Metric Name");
      c_value = column(f, n, "Metric Value");
      c_unit = column(f, n, "Metric Unit");
      c_kernel = column(f, n, "Kernel Name");
      if (c_kernel < 0) c_kernel = column(f, n, "Function Name");
      if (c_name < 0 || c_value < 0) c_name = -1;
      else nh = n;
      continue;
    }
    if (n < nh) continue;
    if (kernel_name && c_kernel >= 0 && !same_kernel(f[c_kernel], kernel_name)) continue;
    for (size_t i = 0; i < n_metrics; i++)
      if (!found[i] && !strcmp(f[c_name], metrics[i]) &&
          !parse_value(f[c_value], c_unit >= 0 ? f[c_unit] : NULL, &values[i])) {
        found[i] = true;
        n_found++;
      }
  }
  free(copy);
  if (c_name < 0) {
    snprintf(err, errlen, "ncu printed no CSV header with \"Metric Name\" and \"Metric Value\"");
    return -1;
  }
  return n_found;
}

int sv_ncu_measure(const char *ncu, const char *self, const char *plan_path, size_t kernel,
                   size_t cand, int device, const char *kernel_name, int timeout_s, double *values,
                   bool *found, char *err, size_t errlen) {
  size_t ml = 1;
  for (size_t i = 0; i < SV_N_METRICS; i++) ml += strlen(sv_metric_names[i]) + 1;
  char *mlist = malloc(ml), which[64], dev[16], kfilter[512];
  if (!mlist) return snprintf(err, errlen, "out of memory"), -1;
  mlist[0] = 0;
  for (size_t i = 0; i < SV_N_METRICS; i++) {
    if (i) strcat(mlist, ",");
    strcat(mlist, sv_metric_names[i]);
  }
  snprintf(which, sizeof which, "%zu:%zu", kernel, cand);
  snprintf(dev, sizeof dev, "%d", device);
  snprintf(kfilter, sizeof kfilter, "regex:^%s$", kernel_name);
  char *argv[] = {(char *)ncu, "--csv", "--print-units", "base", "--metrics", mlist,
                  "--target-processes", "all", "--kernel-name", kfilter, "--launch-count", "1",
                  (char *)self, "--run-one", which, "--device", dev, (char *)plan_path, NULL};
  char *out = NULL;
  size_t len = 0;
  int st = sv_capture(argv, timeout_s, 0, &out, &len);
  free(mlist);
  int rc;
  if (st == -1) rc = (snprintf(err, errlen, "cannot run %s (use --ncu PATH)", ncu), -1);
  else if (st == 124) rc = (snprintf(err, errlen, "ncu timed out after %d s", timeout_s), -1);
  else if (st) {
    /* ncu explains itself on ==ERROR== lines (e.g. ERR_NVGPUCTRPERM: counters not permitted) */
    const char *e = out ? strstr(out, "==ERROR==") : NULL;
    rc = (snprintf(err, errlen, "ncu exited with status %d%s%.*s", st, e ? ": " : "",
                   e ? (int)strcspn(e, "\n") : 0, e ? e : ""), -1);
  }
  else {
    rc = sv_ncu_parse_csv(out ? out : "", kernel_name, sv_metric_names, SV_N_METRICS, values, found,
                          err, errlen);
    if (rc == 0) snprintf(err, errlen, "ncu reported none of the metrics for %s", kernel_name);
  }
  free(out);
  return rc;
}
