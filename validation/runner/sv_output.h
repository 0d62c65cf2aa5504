/* schedvalidate: writing measured.json and the --write-arch architecture file, atomically. */
#ifndef SV_OUTPUT_H
#define SV_OUTPUT_H
#include <jansson.h>
#include <stdbool.h>

/* Writes obj to path through a temporary file in the same folder and a rename; without force it
   refuses (-1, message) when path exists. */
int sv_write_json_atomic(const json_t *obj, const char *path, bool force, char *err, size_t errlen);

/* The architecture description (schedpredict-arch/1, see arch/h100.json): the template's
   fields, with every figure the device reports replaced and its source saying so, named after
   out_path's file name (arch/NAME.json is how schedpredict finds it by name) when that is a
   valid architecture name. NULL with a message when the template is not an architecture file. */
json_t *sv_arch_from_device(const json_t *tmpl, const json_t *device, const char *out_path,
                            char *err, size_t errlen);

/* A JSON string of text that may not be valid UTF-8 (a compiler log cut mid-character, bytes of
   a plan's source): bytes that do not decode become '?'. Never NULL for non-NULL text. */
json_t *sv_json_text(const char *text);
#endif
