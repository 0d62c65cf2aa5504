/* schedvalidate: the Nsight Compute backend (--backend ncu). */
#ifndef SV_NCU_H
#define SV_NCU_H
#include <stdbool.h>
#include <stddef.h>

/* Reads the CSV that `ncu --csv --metrics ...` prints (one row per kernel launch and metric,
   quoted fields, values possibly with thousands separators and scaled units) and fills
   values[i] for metrics[i] from the rows of kernel_name (any kernel when NULL); found[i] says
   which were present. Lines before the header (ncu's ==PROF== messages, program output) are
   skipped. Returns the number of metrics found, or -1 with a message when there is no header. */
int sv_ncu_parse_csv(const char *text, const char *kernel_name, const char *const *metrics,
                     size_t n_metrics, double *values, bool *found, char *err, size_t errlen);

/* Profiles candidate (kernel, cand) of plan_path by running
   `ncu --csv ... self --run-one K:C plan_path` and parsing its CSV. Returns the number of
   metrics found, or -1 with a message. */
int sv_ncu_measure(const char *ncu, const char *self, const char *plan_path, size_t kernel,
                   size_t cand, int device, const char *kernel_name, int timeout_s, double *values,
                   bool *found, char *err, size_t errlen);
#endif
