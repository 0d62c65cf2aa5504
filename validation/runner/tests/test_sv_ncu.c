/* The ncu CSV reader on a sample in the layout `ncu --csv --metrics ...` prints (written by hand
   after that layout; no GPU here to record one): ==PROF== lines skipped, rows of another kernel
   ignored, thousands separators, scaled units, n/a, quoted commas. */
#include "sv_check.h"
#include "sv_metrics.h"
#include "sv_ncu.h"

static int index_of(const char *name) {
  for (size_t i = 0; i < SV_N_METRICS; i++)
    if (!strcmp(sv_metric_names[i], name)) return (int)i;
  return -1;
}

static void test_sample(void) {
  char *text = sv_read_file("validation/runner/tests/ncu_sample.csv", NULL);
  CHECK(text != NULL);
  if (!text) return;
  double v[SV_N_METRICS];
  bool found[SV_N_METRICS];
  char err[256];
  int n = sv_ncu_parse_csv(text, "sp_transpose_9_c1", sv_metric_names, SV_N_METRICS, v, found, err, sizeof err);
  CHECK_EQ_INT(n, 10); /* 11 metrics, one n/a */
  int i = index_of("dram__bytes_read.sum");
  CHECK(found[i]);
  CHECK_NEAR(v[i], 524288, 0); /* not the other kernel's 999 */
  CHECK_NEAR(v[index_of("dram__bytes_write.sum")], 512e3, 0); /* Kbyte -> byte */
  i = index_of("gpu__time_duration.sum");
  CHECK_NEAR(v[i], 4510, 1e-9); /* usecond -> ns */
  CHECK_NEAR(v[index_of("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")], 2048, 0);
  CHECK_NEAR(v[index_of("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")], 65536, 0);
  CHECK_NEAR(v[index_of("lts__t_sector_op_read_hit_rate.pct")], 33.42, 1e-12);
  CHECK(!found[index_of("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")]);
  n = sv_ncu_parse_csv(text, "sp_other_kernel", sv_metric_names, SV_N_METRICS, v, found, err, sizeof err);
  CHECK_EQ_INT(n, 1);
  CHECK_NEAR(v[index_of("dram__bytes_read.sum")], 999, 0);
  free(text);
}

static void test_quoting_and_errors(void) {
  const char *names[] = {"m.sum"};
  double v[1];
  bool f[1];
  char err[256];
  const char *csv = "\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\r\n"
                    "\"k(double const*, int)\",\"m.sum\",\"Mbyte\",\"1,5\"\r\n";
  CHECK_EQ_INT(sv_ncu_parse_csv(csv, "k", names, 1, v, f, err, sizeof err), 1);
  CHECK_NEAR(v[0], 15e6, 0); /* "1,5" is 15 with a separator, Mbyte scales by 1e6 */
  const char *q = "\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n\"say \"\"hi\"\", k\",\"m.sum\",\"7\"\n";
  CHECK_EQ_INT(sv_ncu_parse_csv(q, NULL, names, 1, v, f, err, sizeof err), 1);
  CHECK_NEAR(v[0], 7, 0);
  CHECK_EQ_INT(sv_ncu_parse_csv(q, "k", names, 1, v, f, err, sizeof err), 0);
  CHECK_EQ_INT(sv_ncu_parse_csv("==PROF== nothing\n", "k", names, 1, v, f, err, sizeof err), -1);
  CHECK(strstr(err, "no CSV header") != NULL);
}

int main(void) {
  SP_RUN(test_sample);
  SP_RUN(test_quoting_and_errors);
  return SP_TEST_END();
}
