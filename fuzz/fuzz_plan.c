/* libFuzzer harness for schedvalidate's plan reader (validation/runner/sv_plan.c): each input is
 * a plan.json. The reader must accept it or refuse it with a message naming the file, never crash,
 * hang or leak. Build and run: scripts/fuzz_plan.sh */
#include <stdint.h>
#include <string.h>

#include "sv_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sv_plan p;
  char err[1024];
  if (sv_plan_parse((const char *)data, size, "fuzz.json", &p, err, sizeof err) == 0) {
    /* what the runner reads of an accepted plan must be there */
    for (size_t k = 0; k < p.n_kernels; k++) {
      if (p.kernels[k].reference >= p.kernels[k].n_cands) __builtin_trap();
      for (size_t i = 0; i < p.kernels[k].n_params; i++) {
        const sv_param *q = &p.kernels[k].params[i];
        size_t n = q->kind == SV_PARAM_ARRAY    ? p.kernels[k].n_arrays
                   : q->kind == SV_PARAM_SCALAR ? p.kernels[k].n_scalars
                                                : p.kernels[k].n_reductions;
        if ((size_t)q->index >= n) __builtin_trap();
      }
    }
    sv_plan_free(&p);
  } else if (strncmp(err, "fuzz.json", 9) != 0) {
    __builtin_trap();
  }
  return 0;
}
