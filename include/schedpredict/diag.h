/* Diagnostics in clang's form: "file:line:col: error: message", collected and counted. */
#ifndef SCHEDPREDICT_DIAG_H
#define SCHEDPREDICT_DIAG_H

#include <stdbool.h>
#include <stdio.h>

typedef enum sp_severity { SP_NOTE, SP_REMARK, SP_WARNING, SP_ERROR } sp_severity;

typedef struct sp_diag {
  FILE *stream; /* where messages go as they come; NULL to only count them */
  int count[SP_ERROR + 1];
  bool quiet; /* drop notes and remarks */
} sp_diag;

void sp_diag_init(sp_diag *d, FILE *stream);
/* file may be NULL (then no location is printed); line/col 0 print as absent. */
void sp_diag_report(sp_diag *d, sp_severity sev, const char *file, unsigned line, unsigned col,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
