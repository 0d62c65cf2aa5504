/* CUPTI's host side without a GPU: the runner's metric list is valid for GH100 (H100) and
   needs 2 replay passes there (shared/notes/cupti-from-c.md §3); one unknown name fails the
   whole configuration with a message. */
#include "sv_check.h"
#include "sv_cupti.h"
#include "sv_metrics.h"

static void test_gh100(void) {
  sv_cupti *c;
  size_t passes = 0;
  char err[1024] = "";
  int rc = sv_cupti_host_open(&c, "GH100", NULL, sv_metric_names, SV_N_METRICS, &passes, err, sizeof err);
  CHECK_EQ_INT(rc, SV_CUPTI_OK);
  if (rc) fprintf(stderr, "%s\n", err);
  CHECK_EQ_INT(passes, 2);
  sv_cupti_close(c);
  /* the L1 counters alone fit one pass */
  rc = sv_cupti_host_open(&c, "GH100", NULL, sv_metric_names + 1, 1, &passes, err, sizeof err);
  CHECK_EQ_INT(rc, SV_CUPTI_OK);
  CHECK_EQ_INT(passes, 1);
  sv_cupti_close(c);
}

static void test_bad_metric(void) {
  const char *bad[] = {"dram__bytes_read.sum", "lts__t_sector_srcunit_tex_op_read_hit_rate.pct"};
  sv_cupti *c;
  size_t passes = 0;
  char err[1024] = "";
  CHECK_EQ_INT(sv_cupti_host_open(&c, "GH100", NULL, bad, 2, &passes, err, sizeof err), SV_CUPTI_ERROR);
  CHECK(strstr(err, "cuptiProfilerHostConfigAddMetrics") != NULL);
  CHECK_EQ_INT(sv_cupti_host_open(&c, "NOCHIP", NULL, sv_metric_names, SV_N_METRICS, &passes, err, sizeof err),
               SV_CUPTI_ERROR);
  CHECK(strstr(err, "NOCHIP") != NULL);
}

int main(void) {
  SP_RUN(test_gh100);
  SP_RUN(test_bad_metric);
  return SP_TEST_END();
}
