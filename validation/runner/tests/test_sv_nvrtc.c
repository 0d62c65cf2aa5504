/* NVRTC compiles every candidate of the hand-made plan for sm_90 without a GPU, and a broken
   candidate yields NVRTC's log. */
#include "sv_check.h"
#include "sv_nvrtc.h"
#include "sv_plan.h"

static void test_plan_compiles(void) {
  sv_plan p;
  char err[8192];
  CHECK_EQ_INT(sv_plan_load(SV_PLAN_FILE, &p, err, sizeof err), 0);
  for (size_t k = 0; k < p.n_kernels; k++)
    for (size_t c = 0; c < p.kernels[k].n_cands; c++) {
      char *cubin;
      size_t n;
      int rc = sv_nvrtc_compile(p.kernels[k].prelude, p.kernels[k].cands[c].source,
                                p.kernels[k].cands[c].kernel_name, "sm_90", &cubin, &n, err, sizeof err);
      CHECK_EQ_INT(rc, 0);
      if (rc) {
        fprintf(stderr, "%s\n", err);
        continue;
      }
      CHECK(n > 4 && !memcmp(cubin, "\177ELF", 4)); /* a CUBIN is an ELF file */
      free(cubin);
    }
  sv_plan_free(&p);
}

static void test_compile_error(void) {
  char *cubin, err[8192];
  size_t n;
  int rc = sv_nvrtc_compile("#define N 4", "extern \"C\" __global__ void k(double *a) { a[0] = undefined_name; }",
                            "k", "sm_90", &cubin, &n, err, sizeof err);
  CHECK_EQ_INT(rc, -1);
  CHECK(strstr(err, "NVRTC (sm_90)") != NULL && strstr(err, "undefined_name") != NULL);
}

/* The toolkit's headers are found (here /usr/local/cuda/include or $CUDA_HOME/include). */
static void test_toolkit_header(void) {
  char *cubin, err[8192];
  size_t n;
  int rc = sv_nvrtc_compile("#include <cuda_fp16.h>\n",
                            "extern \"C\" __global__ void h(__half *a) { a[0] = __float2half(1.5f); }", "h",
                            "sm_90", &cubin, &n, err, sizeof err);
  CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s\n", err);
  else free(cubin);
}

int main(void) {
  SP_RUN(test_plan_compiles);
  SP_RUN(test_compile_error);
  SP_RUN(test_toolkit_header);
  return SP_TEST_END();
}
