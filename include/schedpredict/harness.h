/* validation/harness.c: a timing harness (a C main) for the functions of one file that hold
 * OpenACC nests, to build with a real OpenACC compiler as written and after --fix and compare. */
#ifndef SCHEDPREDICT_HARNESS_H
#define SCHEDPREDICT_HARNESS_H

#include "schedpredict/analyzer.h"
#include "schedpredict/diag.h"
#include "schedpredict/ir.h"

/* The harness source for `file` (analyzed into prog with opt) as a malloc'd string, or NULL on
 * failure (reported through diag). The harness #includes the kernel file (SP_HARNESS_KERNEL may
 * name another one with the same functions, e.g. the --fix output), allocates and fills every
 * array the functions take or use, keeps them on the device in an enclosing `acc data` region,
 * calls each function once for a checksum, then times it, and prints one JSON line per
 * function. Functions it cannot drive are listed in the output's "skipped" lines with the
 * reason. */
char *sp_harness_source(const char *file, const sp_analyzer_options *opt, const sp_program *prog,
                        sp_diag *diag);

#endif
