/* schedvalidate: candidate selection for --shard, --kernel and --candidates. */
#include "sv_select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sv_parse_shard(const char *s, unsigned *k, unsigned *n, char *err, size_t errlen) {
  char *end;
  errno = 0;
  unsigned long a = strtoul(s, &end, 10);
  if (end == s || *end != '/' || errno) goto fail;
  const char *t = end + 1;
  unsigned long b = strtoul(t, &end, 10);
  if (end == t || *end || errno || a < 1 || b < 1 || a > b || b > 1000000) goto fail;
  *k = (unsigned)a;
  *n = (unsigned)b;
  return 0;
fail:
  snprintf(err, errlen, "--shard '%s': expected K/N with 1 <= K <= N (e.g. 3/8)", s);
  return -1;
}

int sv_parse_id_list(const char *s, int64_t **ids, size_t *n, char *err, size_t errlen) {
  *ids = NULL;
  *n = 0;
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  int64_t *v = malloc(cap * sizeof *v);
  if (!v) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    if (*p < '0' || *p > '9') goto fail;
    long long x = strtoll(p, &end, 10);
    if (errno) goto fail;
    v[(*n)++] = x;
    if (!*end) break;
    if (*end != ',') goto fail;
    p = end + 1;
  }
  *ids = v;
  return 0;
fail:
  free(v);
  *n = 0;
  snprintf(err, errlen, "--candidates '%s': expected candidate ids separated by commas (e.g. 1,5,9)", s);
  return -1;
}

static int wanted(const sv_selection *sel, size_t pos, int64_t id) {
  if (sel->shard_n > 1 && pos % sel->shard_n != sel->shard_k - 1) return 0;
  if (!sel->cand_ids) return 1;
  for (size_t i = 0; i < sel->n_cand_ids; i++)
    if (sel->cand_ids[i] == id) return 1;
  return 0;
}

long sv_select(const sv_plan *plan, const sv_selection *sel, sv_item **items, char *err,
               size_t errlen) {
  size_t total = 0, n = 0, pos = 0;
  int kernel_found = !sel->kernel_id;
  for (size_t k = 0; k < plan->n_kernels; k++) total += plan->kernels[k].n_cands;
  sv_item *v = malloc((total ? total : 1) * sizeof *v);
  if (!v) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t k = 0; k < plan->n_kernels; k++) {
    const sv_kernel *kn = &plan->kernels[k];
    size_t first = pos;
    pos += kn->n_cands;
    if (sel->kernel_id && strcmp(sel->kernel_id, kn->id)) continue;
    kernel_found = 1;
    if (wanted(sel, first + kn->reference, kn->cands[kn->reference].id))
      v[n++] = (sv_item){k, kn->reference};
    for (size_t c = 0; c < kn->n_cands; c++)
      if (c != kn->reference && wanted(sel, first + c, kn->cands[c].id)) v[n++] = (sv_item){k, c};
  }
  if (!kernel_found) {
    free(v);
    snprintf(err, errlen, "--kernel '%s': the plan has no kernel with this id", sel->kernel_id);
    return -1;
  }
  *items = v;
  return (long)n;
}
