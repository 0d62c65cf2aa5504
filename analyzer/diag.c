#include <stdarg.h>
#include <string.h>

#include "schedpredict/diag.h"

void sp_diag_init(sp_diag *d, FILE *stream) {
  memset(d, 0, sizeof *d);
  d->stream = stream;
}

static const char *const sp_severity_names[] = {"note", "remark", "warning", "error"};

void sp_diag_report(sp_diag *d, sp_severity sev, const char *file, unsigned line, unsigned col,
                    const char *fmt, ...) {
  d->count[sev]++;
  if (!d->stream || (d->quiet && sev <= SP_REMARK)) return;
  if (file && line && col)
    fprintf(d->stream, "%s:%u:%u: ", file, line, col);
  else if (file)
    fprintf(d->stream, "%s: ", file);
  else
    fputs("schedpredict: ", d->stream);
  fprintf(d->stream, "%s: ", sp_severity_names[sev]);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(d->stream, fmt, ap);
  va_end(ap);
  fputc('\n', d->stream);
}
