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

/* The batch compiler gives each candidate what one compile gives it: the mock plan's ten
   candidates (one does not compile) on 4 threads against one at a time. */
static void test_parallel_equals_sequential(void) {
  sv_plan p;
  char err[8192];
  CHECK_EQ_INT(sv_plan_load("tests/inputs/plans/mock_faults.json", &p, err, sizeof err), 0);
  const sv_kernel *k = &p.kernels[0];
  sv_nvrtc_job jobs[16];
  size_t n = k->n_cands < 16 ? k->n_cands : 16;
  for (size_t i = 0; i < n; i++) jobs[i] = (sv_nvrtc_job){k->cands[i].source, k->cands[i].kernel_name, NULL, 0, NULL};
  sv_nvrtc_compile_all(k->prelude, "sm_90", jobs, n, 4);
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    char *cubin = NULL;
    size_t size = 0;
    int rc = sv_nvrtc_compile(k->prelude, k->cands[i].source, k->cands[i].kernel_name, "sm_90", &cubin, &size, err,
                              sizeof err);
    CHECK_EQ_INT(rc == 0, jobs[i].cubin != NULL);
    CHECK_EQ_INT(rc != 0, jobs[i].err != NULL);
    if (!rc && jobs[i].cubin) CHECK(size == jobs[i].size && !memcmp(cubin, jobs[i].cubin, size));
    if (rc && jobs[i].err) CHECK_EQ_STR(err, jobs[i].err);
    failed += rc != 0;
    free(cubin);
    free(jobs[i].cubin);
    free(jobs[i].err);
  }
  CHECK_EQ_INT(failed, 1); /* candidate 2 uses an undefined name */
  sv_plan_free(&p);
}

int main(void) {
  SP_RUN(test_plan_compiles);
  SP_RUN(test_compile_error);
  SP_RUN(test_toolkit_header);
  SP_RUN(test_parallel_equals_sequential);
  return SP_TEST_END();
}
