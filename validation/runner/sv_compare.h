/* schedvalidate: comparing a candidate's outputs with the reference candidate's (FORMATS.md). */
#ifndef SV_COMPARE_H
#define SV_COMPARE_H
#include <stddef.h>
#include <stdint.h>

#include "sv_plan.h"

typedef struct {
  int equal;            /* 1 when bitwise equal */
  double max_rel_diff;  /* largest |a-b| / max(|a|,|b|) over elements (1 for differing bytes) */
  int64_t first;        /* first differing element, -1 when equal */
} sv_diff;

/* Compares n elements of type t (or bytes when t is NULL) of got against ref. NaN against a
   number, or infinities of different sign, count as an infinite difference. */
sv_diff sv_compare(const sv_ctype *t, const void *got, const void *ref, size_t n);
/* The element's value as text ("0.75", "-3"), for messages. */
void sv_format_elem(const sv_ctype *t, const void *p, char *buf, size_t len);
/* Accepted relative difference for a reduction of type t (1e-12 double, 1e-5 float, 0 else). */
double sv_reduction_tolerance(sv_ctype t);
#endif
