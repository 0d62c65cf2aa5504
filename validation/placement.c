/* Recorded block placements and the model under them (include/schedpredict/placement.h). */
#include "schedpredict/placement.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct place_row {
  int64_t block, start;
  int sm;
} place_row;

static int place_row_cmp(const void *a, const void *b)
{
  const place_row *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return (x->block > y->block) - (x->block < y->block);
}

static int place_fail(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

int sp_place_read_csv(FILE *f, const char *name, int nsm, int64_t nblocks,
                      sp_block_placement *out, char *err, size_t errlen)
{
  if (!f || !out || nsm < 1 || nblocks < 1) return place_fail(err, errlen, "bad arguments");
  memset(out, 0, sizeof *out);
  char line[256];
  if (!fgets(line, sizeof line, f) || strncmp(line, "block,smid,start_ns", 19) != 0)
    return place_fail(err, errlen, "%s:1: expected the header block,smid,start_ns,end_ns", name);
  place_row *row = malloc(sizeof *row * (size_t)nblocks);
  unsigned char *seen = calloc((size_t)nblocks, 1);
  int *sm_of = malloc(sizeof *sm_of * (size_t)nblocks);
  int64_t *block = malloc(sizeof *block * (size_t)nblocks);
  int rc = -1;
  if (!row || !seen || !sm_of || !block) {
    place_fail(err, errlen, "out of memory");
    goto out;
  }
  int64_t n = 0;
  for (long ln = 2; fgets(line, sizeof line, f); ln++) {
    int64_t b, sm, start, end;
    char tail;
    if (line[0] == '\n') continue;
    if (sscanf(line, "%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64 " %c", &b, &sm, &start, &end,
               &tail) != 4) {
      place_fail(err, errlen, "%s:%ld: expected four integers block,smid,start_ns,end_ns", name, ln);
      goto out;
    }
    if (b < 0 || b >= nblocks || sm < 0 || sm >= nsm) {
      place_fail(err, errlen,
                 "%s:%ld: block %" PRId64 " on SM %" PRId64 " is outside the grid of %" PRId64
                 " blocks on %d SMs (is it this candidate's and this GPU's placement?)",
                 name, ln, b, sm, nblocks, nsm);
      goto out;
    }
    if (seen[b]++) {
      place_fail(err, errlen, "%s:%ld: block %" PRId64 " appears twice", name, ln, b);
      goto out;
    }
    row[n++] = (place_row){b, start, (int)sm};
  }
  if (n != nblocks) {
    place_fail(err, errlen, "%s: %" PRId64 " of the grid's %" PRId64 " blocks are listed", name, n,
               nblocks);
    goto out;
  }
  qsort(row, (size_t)n, sizeof *row, place_row_cmp); /* by start, ties lower block first */
  for (int64_t i = 0; i < n; i++) {
    sm_of[i] = row[i].sm;
    block[i] = row[i].block;
  }
  rc = sp_trace_placement_build(nsm, n, sm_of, block, out);
  if (rc) place_fail(err, errlen, "out of memory");
out:
  free(row);
  free(seen);
  free(sm_of);
  free(block);
  return rc;
}

int sp_place_simulate_sm(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                         const sp_cm_options *cm, const sp_block_placement *placement, int sm,
                         sp_cm_counters *out, int64_t *blocks)
{
  if (!nest || !s || !arch || !out || sm < 0 || sm >= arch->sm_count) return -1;
  sp_cm_options o = cm ? *cm : (sp_cm_options){0};
  o.l2_fraction = 1.0 / arch->sm_count;
  sp_cm_memsys *m = sp_cm_memsys_create(arch, 1, nest->narrays, &o);
  if (!m) return -1;
  sp_trace_options to = {0};
  to.sample_sms = 1;
  to.sample_sm_first = sm;
  to.placement = placement;
  sp_trace_stats st;
  int rc = sp_trace_run(nest, s, arch, &to, sp_cm_memsys_access, m, &st);
  if (rc == 0) {
    sp_cm_memsys_counters(m, -1, out);
    if (blocks) *blocks = st.blocks_simulated;
  }
  sp_cm_memsys_free(m);
  return rc == 0 ? 0 : -1;
}
