/* schedpredict compare: the model's predictions (plan.json) against the GPU's measurements
 * (measured.json, one or several shards), per candidate, per kernel and over all kernels.
 * Formats: validation/FORMATS.md. */
#ifndef SCHEDPREDICT_COMPARE_H
#define SCHEDPREDICT_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "schedpredict/arch.h"

#define SP_CMP_SCHEMA "schedpredict-comparison"
#define SP_CMP_SCHEMA_VERSION 1

/* Exit codes of `schedpredict compare` beyond the common ones (0 ok, 1 internal, 2 usage,
 * 3 unreadable or invalid input). */
enum {
  SP_CMP_EXIT_NOTHING = 5,      /* no candidate was measured with status ok */
  SP_CMP_EXIT_WRONG_RESULT = 6, /* written, but a candidate computed a wrong result (a bug) */
};

/* The counters compared, modeled vs measured. Hit rates are percent; the measured ones are
 * derived from hit sectors / sectors (Hopper's raw L2 rate is not comparable, DESIGN.md). */
typedef enum sp_cmp_field {
  SP_CMP_LD_REQUESTS,   /* global_load_requests */
  SP_CMP_LD_SECTORS,    /* gld_transactions */
  SP_CMP_L1_HIT_SECTORS,
  SP_CMP_L1_HIT_PCT,    /* global_hit_rate */
  SP_CMP_L1_MISS_SECTORS, /* load sectors the L1s send to the L2: the model's L2 reads */
  SP_CMP_L2_SECTORS,    /* l2_tex_read_transactions */
  SP_CMP_L2_HIT_SECTORS,
  SP_CMP_L2_HIT_PCT,    /* l2_tex_read_hit_rate (derived) */
  SP_CMP_DRAM_BYTES,    /* dram__bytes_read.sum */
  SP_CMP_DRAM_SECTORS,  /* dram_read_transactions = bytes / 32 */
  SP_CMP_DRAM_WRITE_BYTES, /* dram__bytes_write.sum (not in measurements before 2026-11-23) */
  SP_CMP_TIME_US,
  SP_CMP_NFIELDS
} sp_cmp_field;

typedef struct sp_cmp_field_info {
  const char *key;    /* our name: the nvprof name where there is one */
  const char *nvprof; /* NULL when nvprof had none */
  const char *nsight; /* Nsight Compute metric, or what the measurement is read from */
  bool is_rate;       /* percent: errors in percentage points, not relative */
} sp_cmp_field_info;

extern const sp_cmp_field_info sp_cmp_fields[SP_CMP_NFIELDS];

/* The candidate statuses of measured.json (validation/FORMATS.md). */
#define SP_CMP_NSTATUS 8
extern const char *const sp_cmp_statuses[SP_CMP_NSTATUS];

typedef struct sp_cmp_candidate {
  /* from the plan */
  int64_t id;
  int model_rank;
  const char *pattern, *cuda_mapping, *openacc;
  bool compiler_default;
  int64_t block[3], grid[3];
  double model[SP_CMP_NFIELDS]; /* NaN: not given */
  double cost_xu;
  bool sampled;
  /* from the measurements (measured_file NULL: no shard measured it) */
  const char *measured_file;
  const char *status, *message, *result_equal;
  double meas[SP_CMP_NFIELDS];  /* NaN: not measured */
  bool l1_miss_derived; /* meas[SP_CMP_L1_MISS_SECTORS] is sectors - hits (no lookup_miss) */
  double l1_hit_raw_pct, l2_hit_raw_pct, occupancy_pct, time_min_us, time_max_us, max_rel_diff;
  double duration_us; /* gpu__time_duration.sum in us (CUPTI, one replayed launch); NaN: absent */
  int64_t registers; /* -1: not given */
  /* its registers let fewer of its blocks on an SM than the model assumed (the plan's
   * registers_per_thread), and its grid has more blocks than the SMs then hold at once */
  bool register_limited;
  bool ok;           /* measured, status ok, result not "differs": used in the statistics */
  bool wrong_result;
} sp_cmp_candidate;

/* Worst / within-0 % / within-1 % of |modeled - measured| / measured over a kernel's candidates. */
typedef struct sp_cmp_exactness {
  int n, exact, within_1pct;
  double worst_rel; /* signed: the one with the largest magnitude */
} sp_cmp_exactness;

typedef struct sp_cmp_kernel_stats {
  int n_ok, n_failed, n_unmeasured;
  double r2_cost, rho_cost, r2_time, rho_time; /* vs measured time; NaN when undefined */
  double r2_log_cost;                          /* R^2 of log(cost) vs log(time) */
  int chosen;            /* index of the ok candidate with the best model rank; -1 none */
  int best;              /* index of the measured fastest ok candidate */
  int deflt;             /* index of the compiler default; -1 none in the plan */
  int chosen_measured_rank; /* 1 = fastest */
  double regret;         /* t(chosen) / t(best) - 1 */
  double percentile;     /* share of the other ok candidates strictly slower than chosen, % */
  double speedup;        /* t(default) / t(chosen), measured; NaN if the default is not ok */
  double speedup_model;  /* the same, predicted times */
  double l1_mae_pp, l2_mae_pp, l2_raw_mae_pp; /* mean |modeled - measured| hit rate, points */
  double dram_median_abs_rel, dram_worst_rel;
  sp_cmp_exactness requests, sectors, l1_miss_sectors, l2_sectors;
  int n_register_limited; /* of the ok candidates */
  double limited_time_ratio, others_time_ratio; /* median measured / predicted time; NaN: none */
} sp_cmp_kernel_stats;

typedef struct sp_cmp_kernel {
  const char *id, *file, *function;
  int64_t line;
  const char *selection;
  int64_t space_size, reference;
  int64_t model_registers; /* the plan's registers_per_thread; 0: the model assumed no limit */
  sp_cmp_candidate *cand;
  int ncand;
  sp_cmp_kernel_stats st;
  int paper_row; /* index into the dissertation's Table 7.3 rows, -1 if not one of them */
} sp_cmp_kernel;

typedef struct sp_cmp_measured_file {
  const char *path;
  json_t *root;
  const char *device, *shard, *backend, *statistic;
  const char *plan_sha256; /* of the plan the runner read; NULL when not given */
  bool l2_flushed;
} sp_cmp_measured_file;

typedef struct sp_cmp_data {
  const char *plan_path;
  json_t *plan_root;
  const char *model_arch, *generator_version, *generator_date;
  sp_arch arch;    /* the description model_arch names, for the register limits */
  bool arch_known; /* false: model_arch missing or not a description here */
  sp_cmp_kernel *kernels;
  int nkernels;
  json_t *skipped; /* the plan's nests that were not generated (borrowed), or NULL */
  sp_cmp_measured_file *files;
  int nfiles;
  int n_wrong_result;
} sp_cmp_data;

/* The dissertation's Table 7.3 (Xu, K40): R^2 and speedup over the compiler default. */
typedef struct sp_cmp_paper_row {
  const char *name; /* file stem without '-' / '_' */
  const char *title;
  double r2, speedup;
} sp_cmp_paper_row;
extern const sp_cmp_paper_row sp_cmp_paper[8];

/* Reading. Each returns 0, or -1 with a message naming the file and the JSON path in err.
 * The json_t forms take a reference of their own (the caller keeps its one). */
int sp_cmp_load_plan(sp_cmp_data *c, const char *path, char *err, size_t n);
int sp_cmp_load_plan_json(sp_cmp_data *c, json_t *root, const char *path, char *err, size_t n);
int sp_cmp_add_measured(sp_cmp_data *c, const char *path, char *err, size_t n);
int sp_cmp_add_measured_json(sp_cmp_data *c, json_t *root, const char *path, char *err, size_t n);
void sp_cmp_free(sp_cmp_data *c);
/* Takes each measured candidate's time from gpu__time_duration.sum instead of the CUDA events
 * (`compare --duration`): the kernel's duration, which leaves out the launch's host side (4-7 us
 * more by events for a kernel of a few microseconds). 0, or -1 with a message naming the file
 * and candidate where a candidate measured ok lacks the metric. */
int sp_cmp_time_from_duration(sp_cmp_data *c, char *err, size_t n);

/* Median of v[0..n) (sorts v in place); NaN when n is 0. */
double sp_cmp_median(double *v, size_t n);

/* Statistics of every kernel (after all measurement files are added). */
void sp_cmp_analyze(sp_cmp_data *c);

typedef enum sp_cmp_format { SP_CMP_TEXT, SP_CMP_JSON, SP_CMP_CSV } sp_cmp_format;
/* The report as a malloc'ed string; NULL when out of memory. */
char *sp_cmp_render(const sp_cmp_data *c, sp_cmp_format format);

/* `schedpredict compare ...` (argv[0] is "compare"). write_output writes text to a path
 * atomically (the CLI's writer), returning an exit code. */
typedef int (*sp_cmp_writer)(const char *path, bool force, const char *text);
int sp_cmp_main(int argc, char **argv, sp_cmp_writer write_output);

#endif
