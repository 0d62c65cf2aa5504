/* The runner's tests use the project's harness (tests/sp_test.h) plus a file reader. */
#ifndef SV_CHECK_H
#define SV_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#include "../../../tests/sp_test.h"

static inline char *sv_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  if (len) *len = buf ? (size_t)n : 0;
  return buf;
}
#define SV_PLAN_FILE "tests/inputs/plans/transpose.json"
#endif
