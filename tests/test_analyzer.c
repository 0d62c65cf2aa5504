/* The analyzer on small sources held in memory: every value checked by hand. */
#include <math.h>
#include <stdlib.h>

#include "schedpredict/analyzer.h"
#include "tests/sp_test.h"

static sp_diag last_diag;
static FILE *diag_capture; /* where analyze's messages go when set (open_memstream) */

static int analyze(const char *src, const char *const *args, int nargs, const sp_param *params,
                   int nparams, bool all_loops, sp_program *prog) {
  sp_analyzer_options opt;
  memset(&opt, 0, sizeof opt);
  opt.clang_args = args;
  opt.nclang_args = nargs;
  opt.params = params;
  opt.nparams = nparams;
  opt.all_loops = all_loops;
  opt.unsaved_contents = src;
  opt.unsaved_length = strlen(src);
  sp_diag_init(&last_diag, diag_capture ? diag_capture : getenv("SP_TEST_VERBOSE") ? stderr : NULL);
  memset(prog, 0, sizeof *prog);
  const char *files[] = {"t.c"};
  return sp_analyze(files, 1, &opt, &last_diag, prog);
}

static const sp_ref *ref_named(const sp_nest *n, const char *text, sp_access acc) {
  for (int i = 0; i < n->nrefs; i++)
    if (strcmp(n->refs[i].text, text) == 0 && n->refs[i].access == acc) return &n->refs[i];
  fprintf(stderr, "no %s reference '%s'\n", acc == SP_READ ? "read" : "write", text);
  return NULL;
}

/* src analyzed with params p (np of them) into *prog: its one nest, or NULL (checked). */
static sp_nest *analyze_one(const char *src, const sp_param *p, int np, sp_program *prog) {
  CHECK_EQ_INT(analyze(src, NULL, 0, p, np, false, prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog->nnests, 1);
  return prog->nnests == 1 ? &prog->nests[0] : NULL;
}

static void test_linearized_and_column_major(void) {
  const char *src =
      "void f(int n, int m, double *restrict a, const double *restrict b) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++)\n"
      "#pragma acc loop vector\n"
      "    for (int j = 0; j < m; j++)\n"
      "      a[i * m + j] = b[i + j * n] + b[i + (j + 1) * n];\n"
      "}\n";
  sp_param p[] = {{"n", 1000}, {"m", 300}};
  sp_program prog;
  sp_nest *n = analyze_one(src, p, 2, &prog);
  if (!n) return;
  CHECK_EQ_INT(n->nloops, 2);
  CHECK_EQ_INT(n->loops[0].trip_max, 1000);
  CHECK_EQ_INT(n->loops[1].trip_max, 300);
  CHECK(n->loops[0].parallel && n->loops[1].parallel);
  CHECK(n->loops[0].band && n->loops[1].band);
  CHECK_EQ_INT(n->band_iterations, 300000);
  CHECK_EQ_INT(n->nrefs, 3);
  const sp_ref *w = ref_named(n, "a[i * m + j]", SP_WRITE);
  const sp_ref *r = ref_named(n, "b[i + (j + 1) * n]", SP_READ);
  CHECK(w && r);
  if (!w || !r) return;
  CHECK_EQ_INT(w->offset.coef[0], 8 * 300);
  CHECK_EQ_INT(w->offset.coef[1], 8);
  CHECK_EQ_INT(r->offset.coef[0], 8);
  CHECK_EQ_INT(r->offset.coef[1], 8 * 1000);
  CHECK_EQ_INT(r->offset.constant, 8 * 1000);
  CHECK_EQ_INT(n->refs[2].access, SP_WRITE); /* program order: both reads, then the write */
  CHECK_EQ_INT(n->narrays, 2);
  CHECK(n->arrays[0].is_pointer && n->arrays[0].size_from_access);
  /* b's extent: max offset 8*(999 + 300*1000) + 8 */
  const sp_array *b = strcmp(n->arrays[0].name, "b") == 0 ? &n->arrays[0] : &n->arrays[1];
  CHECK_EQ_INT(b->total_bytes, 8 * (999 + 300 * 1000) + 8);
  sp_program_free(&prog);
}

static void test_struct_pointer_vla(void) {
  const char *src =
      "struct pt { double x, y; float m; int tag; };\n"
      "void f(int n, int m, double a[n][m], struct pt *p, double *q) {\n"
      "#pragma acc parallel loop collapse(2)\n"
      "  for (int i = 0; i < n; i++)\n"
      "    for (int j = 0; j < m; j++) {\n"
      "      a[i][j] = p[i].y + p[j].m + *(q + j) + *(q + i - 1) + *(q - j + 50);\n"
      "    }\n"
      "}\n";
  sp_param p[] = {{"n", 64}, {"m", 48}};
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, p, 2, false, &prog), SP_EXIT_OK);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  const sp_ref *a = ref_named(n, "a[i][j]", SP_WRITE), *y = ref_named(n, "p[i].y", SP_READ),
               *m = ref_named(n, "p[j].m", SP_READ), *q = ref_named(n, "*(q + i - 1)", SP_READ);
  CHECK(a && y && m && q);
  if (!a || !y || !m || !q) return;
  CHECK_EQ_INT(a->offset.coef[0], 48 * 8);
  CHECK_EQ_INT(a->offset.coef[1], 8);
  CHECK_EQ_INT(y->offset.coef[0], 24);
  CHECK_EQ_INT(y->offset.constant, 8);
  CHECK_EQ_INT(y->size, 8);
  CHECK_EQ_INT(m->offset.coef[1], 24);
  CHECK_EQ_INT(m->offset.constant, 16);
  CHECK_EQ_INT(m->size, 4);
  CHECK_EQ_INT(q->offset.coef[0], 8);
  CHECK_EQ_INT(q->offset.constant, -8);
  const sp_ref *qm = ref_named(n, "*(q - j + 50)", SP_READ); /* pointer minus an index */
  CHECK(qm && qm->offset.coef[1] == -8 && qm->offset.constant == 400 && !qm->irregular);
  const sp_array *arr = &n->arrays[a->array];
  CHECK_EQ_INT(arr->ndims, 2);
  CHECK_EQ_INT(arr->dims[0], 64);
  CHECK_EQ_INT(arr->dims[1], 48);
  CHECK_EQ_INT(arr->total_bytes, 64 * 48 * 8);
  CHECK_EQ_INT(n->arrays[y->array].elem_size, 24);
  CHECK_EQ_STR(n->arrays[y->array].elem_type, "struct pt");
  CHECK_EQ_INT(n->loops[1].collapsed_into, 0);
  CHECK(n->loops[1].parallel);
  sp_program_free(&prog);
}

static void test_loop_forms(void) {
  const char *src =
      "#define N 100\n"
      "enum { M = 40 };\n"
      "static const int K = 7;\n"
      "double a[N][M], b[N];\n"
      "void f(void) {\n"
      "#pragma acc kernels\n"
      "  for (int i = N - 1; i >= 0; i--)\n"
      "    for (int j = 1; j <= i && 0; j += 3) b[i] = 0;\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i += 2)\n"
      "    for (int j = M; j > K; j -= 3)\n"
      "      a[i][j - 1] = b[i];\n"
      "}\n";
  sp_program prog;
  int rc = analyze(src, NULL, 0, NULL, 0, false, &prog);
  CHECK_EQ_INT(rc, SP_EXIT_OK);
  /* the first nest's condition `j <= i && 0` is not a comparison: skipped with a warning */
  CHECK_EQ_INT(prog.nnests, 1);
  CHECK(last_diag.count[SP_WARNING] >= 1);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  CHECK_EQ_INT(n->loops[0].step, 2);
  CHECK_EQ_INT(n->loops[0].upper.constant, 99);
  CHECK_EQ_INT(n->loops[0].trip_max, 50);
  CHECK_EQ_INT(n->loops[1].step, -3);
  CHECK_EQ_INT(n->loops[1].lower.constant, 40);
  CHECK_EQ_INT(n->loops[1].upper.constant, 8); /* j > 7 */
  CHECK_EQ_INT(n->loops[1].trip_max, 11);      /* 40, 37, ..., 10 */
  CHECK(!n->loops[1].parallel);                /* no directive inside parallel: sequential */
  CHECK_EQ_INT(n->loops[1].parallel_reason, SP_PAR_DEFAULT_SEQ);
  CHECK_EQ_INT(n->band_iterations, 50 * 11);
  const sp_ref *w = ref_named(n, "a[i][j - 1]", SP_WRITE);
  CHECK(w && w->offset.constant == -8 && w->offset.coef[0] == 320 && w->offset.coef[1] == 8);
  sp_program_free(&prog);
}

static void test_triangular_and_huge(void) {
  const char *src =
      "void f(long n, double *a) {\n"
      "#pragma acc parallel loop\n"
      "  for (long i = 0; i < n; i++)\n"
      "#pragma acc loop\n"
      "    for (long j = 0; j <= i; j++) a[i * n + j] *= 2.0;\n"
      "}\n";
  sp_param p[] = {{"n", 3000}};
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, p, 1, false, &prog), SP_EXIT_OK);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  CHECK_EQ_INT(n->loops[1].upper.coef[0], 1);
  CHECK_EQ_INT(n->loops[1].trip_min, 1);
  CHECK_EQ_INT(n->loops[1].trip_max, 3000);
  CHECK(n->band_iterations_exact);
  CHECK_EQ_INT((long long)n->band_iterations, 3000LL * 3001 / 2);
  CHECK_EQ_INT(n->nrefs, 2);
  CHECK(n->refs[0].compound && n->refs[0].access == SP_READ);
  CHECK(n->refs[1].compound && n->refs[1].access == SP_WRITE);
  sp_program_free(&prog);

  /* a tile's element loop spans 32 whatever the tile (bounded apart, its upper and lower bound
   * gave 0..1024 trips); counting down from ii + 31 too */
  const char *tiled =
      "void t(double *a) {\n"
      "#pragma acc parallel loop\n"
      "  for (int ii = 0; ii < 1000; ii += 32)\n"
      "    for (int i = ii; i < ii + 32; i++)\n"
      "      for (int k = ii + 31; k >= ii; k--) a[i] += a[k];\n"
      "}\n";
  CHECK_EQ_INT(analyze(tiled, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  if (prog.nnests == 1) {
    for (int k = 1; k < 3; k++) {
      CHECK_EQ_INT(prog.nests[0].loops[k].trip_min, 32);
      CHECK_EQ_INT(prog.nests[0].loops[k].trip_max, 32);
    }
  }
  sp_program_free(&prog);

  /* 10^12 iterations is just a number */
  sp_param big[] = {{"n", 1000000}};
  const char *rect =
      "void g(long n, double *a) {\n"
      "#pragma acc parallel loop collapse(2)\n"
      "  for (long i = 0; i < n; i++)\n"
      "    for (long j = 0; j < n; j++) a[i * n + j] = 1.0;\n"
      "}\n";
  CHECK_EQ_INT(analyze(rect, NULL, 0, big, 1, false, &prog), SP_EXIT_OK);
  if (prog.nnests == 1) CHECK_NEAR(prog.nests[0].band_iterations, 1e12, 0.5);
  sp_program_free(&prog);

  /* but a byte offset past 2^63 is an error */
  sp_param huge[] = {{"n", 4000000000LL}};
  CHECK_EQ_INT(analyze(rect, NULL, 0, huge, 1, false, &prog), SP_EXIT_VALUE);
  CHECK_EQ_INT(prog.nnests, 0);
  sp_program_free(&prog);

  /* An index whose lanes past the last iteration would wrap the trace's 64-bit arithmetic: the
   * nest is skipped with a warning (a covering grid ran 20 iterations too many before). A step
   * of 2^20 over 2^40 leaves room and is kept. */
  const struct { const char *loop; int exit, nests; } steps[] = {
      {"for (long i = 0; i < 9223372036854775000L; i += 1000000000000L) a[i / 1000000000000L] = 0;",
       SP_EXIT_NO_NESTS, 0},
      {"for (long i = 0; i < 1099511627776L; i += 1048576) a[i / 1048576] = 0;", SP_EXIT_OK, 1},
  };
  for (int c = 0; c < 2; c++) {
    char text[256];
    snprintf(text, sizeof text, "void h(double *a) {\n#pragma acc parallel loop\n  %s\n}\n", steps[c].loop);
    CHECK_EQ_INT(analyze(text, NULL, 0, NULL, 0, false, &prog), steps[c].exit);
    CHECK_EQ_INT(prog.nnests, steps[c].nests);
    if (c == 0) CHECK(last_diag.count[SP_WARNING] >= 2);
    if (prog.nnests == 1) CHECK_EQ_INT(prog.nests[0].loops[0].trip_max, 1048576);
    sp_program_free(&prog);
  }
}

/* A nest whose band never runs is skipped with the loop named, whichever way its bound is
 * missed: before, a loop from 10 to 5 was ranked (7 candidates of no traffic, "3.41x faster"),
 * and one from 10 down while i < 0 was said to run away from its bound. */
static void test_zero_trip_loops(void) {
  const struct { const char *loops, *says; } cases[] = {
      {"for (int i = 10; i < 5; i++) a[i][0] = 0;", "loop 'i' runs no iteration (from '10', its bound '5'"},
      {"for (int i = 10; i < 0; i--) a[i][0] = 0;", "'i < 0' is false at its start (i = 10)"},
      {"for (int i = 0; i > 5; i++) a[i][0] = 0;", "'i > 5' is false at its start (i = 0)"},
      {"for (int i = 0; i < 9; i++) for (int j = 5; j < 3; j++) a[i][j] = 0;",
       "loop 'j' runs no iteration (from '5', its bound '3'"},
      {"for (int i = 0; i < 9; i++) for (int j = i; j < i; j++) a[i][j] = 0;",
       "its bound 'i' is already passed for every value of the loops around it"},
      {"for (unsigned i = 15; i >= 0; i--) a[i][0] = 0;",
       "'i >= 0' holds for every value of the unsigned index 'i': the loop never ends"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char text[256], *said = NULL;
    size_t len = 0;
    snprintf(text, sizeof text, "void h(double a[16][16]) {\n#pragma acc parallel loop\n  %s\n}\n",
             cases[c].loops);
    sp_program prog;
    diag_capture = open_memstream(&said, &len);
    CHECK_EQ_INT(analyze(text, NULL, 0, NULL, 0, false, &prog), SP_EXIT_NO_NESTS);
    fclose(diag_capture);
    diag_capture = NULL;
    CHECK_EQ_INT(prog.nnests, 0);
    if (!strstr(said, cases[c].says)) fprintf(stderr, "case %zu said: %s\n", c, said);
    CHECK(strstr(said, cases[c].says) != NULL);
    free(said);
    sp_program_free(&prog);
  }
  /* a triangle whose first row is empty still runs */
  sp_program prog;
  CHECK_EQ_INT(analyze("void h(double a[16][16]) {\n#pragma acc parallel loop\n"
                       "  for (int i = 0; i < 9; i++) for (int j = 0; j < i; j++) a[i][j] = 0;\n}\n",
                       NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  sp_program_free(&prog);
}

static void test_irregular_and_scalars(void) {
  const char *src =
      "void spmv(int n, const int *col, const double *val, const double *x, double *y) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++) {\n"
      "    double s = 0;\n"
      "#pragma acc loop seq\n"
      "    for (int k = 0; k < 27; k++) s += val[i * 27 + k] * x[col[i * 27 + k]];\n"
      "    y[i] = s + x[i * i];\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 1000}};
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, p, 1, false, &prog), SP_EXIT_OK);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  CHECK_EQ_INT(n->nrefs, 5); /* val, col, x[col], x[i*i], y; s stays in a register */
  CHECK_EQ_STR(n->refs[0].text, "val[i * 27 + k]");
  CHECK_EQ_STR(n->refs[1].text, "col[i * 27 + k]"); /* the index is loaded before x */
  CHECK(!n->refs[1].irregular);
  CHECK(n->refs[2].irregular && strstr(n->refs[2].irregular_why, "indirect"));
  CHECK(n->refs[3].irregular && strstr(n->refs[3].irregular_why, "non-affine"));
  CHECK_EQ_INT(n->refs[4].access, SP_WRITE);
  CHECK(!n->loops[1].parallel);
  CHECK_EQ_INT(n->loops[1].parallel_reason, SP_PAR_DECLARED_SEQ);
  CHECK(n->loops[0].parallel);
  CHECK(n->nnotes >= 2); /* both irregular accesses are reported */
  sp_program_free(&prog);
}

/* The loops an irregular access's value depends on: those of its subscript and of the locals it
 * reads; every loop where a local's value is not known. */
static void test_irregular_loops(void) {
  const char *src =
      "void f(int n, const int *col, const double *x, double *y) {\n"
      "#pragma acc parallel loop present(x[0:n], col[0:27 * n])\n"
      "  for (int i = 0; i < n; i++) {\n"
      "#pragma acc loop vector\n"
      "    for (int j = 0; j < 27; j++) {\n"
      "      const int c = col[i];\n"
      "      int d = 0;\n"
      "      d += col[j];\n"
      "      y[i * 27 + j] = x[col[i]] + x[c] + x[col[i * 27 + j]] + x[d] + x[col[n]];\n"
      "    }\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 1000}};
  sp_program prog;
  sp_nest *n = analyze_one(src, p, 1, &prog);
  if (!n) return;
  const char *text[] = {"x[col[i]]", "x[c]", "x[col[i * 27 + j]]", "x[d]", "x[col[n]]"};
  const uint32_t want[] = {1u, 1u, 3u, UINT32_MAX, 0u};
  for (int k = 0; k < 5; k++) {
    const sp_ref *r = ref_named(n, text[k], SP_READ);
    CHECK(r && r->irregular);
    if (r && r->irregular) CHECK_EQ_INT(r->irregular_loops, want[k] | SP_REF_LOOPS_KNOWN);
  }
  sp_program_free(&prog);
}

/* A subscript that is affine but for loaded terms keeps its affine rest in the offset, and
 * the loops of its loaded terms alone as irregular_loops: a gathered row (a[perm[i]][j],
 * x[col[i] * M + j]) is read along j by lanes that share col[i]. A non-affine operator over a
 * load (%) keeps the whole subscript irregular. */
static void test_irregular_affine_rest(void) {
  const char *src =
      "void f(int n, const int *perm, const int *col, double a[64][16], const double *x, double *y) {\n"
      "#pragma acc parallel loop present(x[0:n])\n"
      "  for (int i = 0; i < 64; i++) {\n"
      "#pragma acc loop vector\n"
      "    for (int j = 0; j < 16; j++) {\n"
      "      y[i * 16 + j] = a[perm[i]][j] + x[col[i] * 16 + j] + x[2 * (col[i] - j) + 3] +\n"
      "                      x[(col[i] + j) % n] + x[col[i] * col[j]];\n"
      "    }\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 1024}};
  sp_program prog;
  sp_nest *n = analyze_one(src, p, 1, &prog);
  if (!n) return;
  const struct { const char *text; uint32_t loops; int64_t j, c, scale; } want[] = {
      {"a[perm[i]][j]", 1u, 8, 0, 128},
      {"x[col[i] * 16 + j]", 1u, 8, 0, 128},
      {"x[2 * (col[i] - j) + 3]", 1u, -16, 24, 16},
      {"x[(col[i] + j) % n]", 3u, 0, 0, 8},
      {"x[col[i] * col[j]]", 3u, 0, 0, 8},
  };
  for (int k = 0; k < 5; k++) {
    const sp_ref *r = ref_named(n, want[k].text, SP_READ);
    CHECK(r && r->irregular);
    if (!r || !r->irregular) continue;
    CHECK_EQ_INT(r->irregular_loops, want[k].loops | SP_REF_LOOPS_KNOWN);
    CHECK_EQ_INT(r->offset.coef[0], 0);
    CHECK_EQ_INT(r->offset.coef[1], want[k].j);
    CHECK_EQ_INT(r->offset.constant, want[k].c);
    CHECK_EQ_INT(r->irregular_scale, want[k].scale);
  }
  sp_program_free(&prog);
}

/* Rows through a table of row pointers (double **a): with the rows' extent in the data clause
 * they are one array of m-element rows, coalesced within a row; without it each lane stays its
 * own sector, and a warning asks for the clause. */
static void test_row_pointers(void) {
  const char *fmt =
      "void f(int n, int m, float **a, float *const *c, const float *b) {\n"
      "#pragma acc parallel loop %s\n"
      "  for (int i = 0; i < n; i++)\n"
      "#pragma acc loop vector\n"
      "    for (int j = 1; j < m; j++) {\n"
      "      a[i][j] = b[j] + a[i + 1][j - 1] + c[j][i];\n"
      "    }\n"
      "}\n";
  sp_param p[] = {{"n", 300}, {"m", 500}};
  for (int clause = 0; clause < 2; clause++) {
    char src[512];
    snprintf(src, sizeof src, fmt, clause ? "present(a[0:n+1][0:m], c[0:m][0:n+2], b[0:m])" : "");
    sp_program prog;
    CHECK_EQ_INT(analyze(src, NULL, 0, p, 2, false, &prog), SP_EXIT_OK);
    CHECK_EQ_INT(prog.nnests, 1);
    if (prog.nnests != 1) continue;
    const sp_nest *n = &prog.nests[0];
    const sp_ref *w = ref_named(n, "a[i][j]", SP_WRITE);
    const sp_ref *up = ref_named(n, "a[i + 1][j - 1]", SP_READ);
    const sp_ref *col = ref_named(n, "c[j][i]", SP_READ);
    const sp_ref *row = ref_named(n, "a[i]", SP_READ); /* the row pointer's own load */
    CHECK(w && up && col && row);
    if (!w || !up || !col || !row) continue;
    CHECK(!row->irregular && row->offset.coef[0] == 8);
    if (!clause) {
      CHECK(w->irregular && up->irregular && col->irregular);
      CHECK(last_diag.count[SP_WARNING] >= 1);
    } else {
      CHECK(!w->irregular && !up->irregular && !col->irregular);
      CHECK_EQ_INT(w->array, up->array); /* one array of rows */
      CHECK(strcmp(n->arrays[w->array].name, "a[*]") == 0);
      CHECK_EQ_INT(w->offset.coef[0], 4 * 500);
      CHECK_EQ_INT(w->offset.coef[1], 4);
      CHECK_EQ_INT(up->offset.constant, 4 * 500 - 4);
      CHECK_EQ_INT(col->offset.coef[1], 4 * 302); /* c's rows: 302 elements, along j */
      CHECK_EQ_INT(col->offset.coef[0], 4);
      CHECK_EQ_INT(n->arrays[w->array].total_bytes, 4 * (300 * 500 + 498 + 1));
      CHECK_EQ_INT(last_diag.count[SP_WARNING], 0);
    }
    sp_program_free(&prog);
  }
  /* a structure's table of rows, named in the clause as written */
  const char *member =
      "typedef struct { double **u; } grid_t;\n"
      "void g(grid_t *g, int n, int m) {\n"
      "#pragma acc parallel loop present(g->u[0:n][0:m])\n"
      "  for (int i = 0; i < n; i++)\n"
      "#pragma acc loop vector\n"
      "    for (int j = 0; j < m; j++) g->u[i][j] = 0;\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(member, NULL, 0, p, 2, false, &prog), SP_EXIT_OK);
  const sp_ref *w = prog.nnests == 1 ? ref_named(&prog.nests[0], "g->u[i][j]", SP_WRITE) : NULL;
  CHECK(w && !w->irregular && w->offset.coef[0] == 8 * 500 && w->offset.coef[1] == 8);
  if (w) CHECK(strcmp(prog.nests[0].arrays[w->array].name, "g->u[*]") == 0);
  CHECK_EQ_INT(last_diag.count[SP_WARNING], 0);
  sp_program_free(&prog);

  /* the extent from a data directive before the nest in its function, not from another
   * function's (7 elements there) */
  const char *region =
      "void other(int n, double **a) {\n"
      "#pragma acc data copy(a[0:n][0:7])\n"
      "  {}\n"
      "}\n"
      "void h(int n, int m, double **a) {\n"
      "#pragma acc data copyin(a[0:n][0:m])\n"
      "  {\n"
      "#pragma acc parallel loop\n"
      "    for (int i = 0; i < n; i++)\n"
      "      for (int j = 0; j < m; j++) a[i][j] = 0;\n"
      "  }\n"
      "}\n"
      "void k(int n, int m, double **a) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++)\n"
      "    for (int j = 0; j < m; j++) a[i][j] = 0;\n"
      "}\n";
  CHECK_EQ_INT(analyze(region, NULL, 0, p, 2, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 2);
  if (prog.nnests == 2) {
    const sp_ref *in = ref_named(&prog.nests[0], "a[i][j]", SP_WRITE);
    const sp_ref *out = ref_named(&prog.nests[1], "a[i][j]", SP_WRITE);
    CHECK(in && !in->irregular && in->offset.coef[0] == 8 * 500);
    CHECK(out && out->irregular); /* k() has no clause: h()'s region does not reach it */
  }
  CHECK_EQ_INT(last_diag.count[SP_WARNING], 1);
  sp_program_free(&prog);
}

/* Subscripts written through macros: libclang 14 cannot show the operators of a macro body, so
 * the analyzer evaluates the subscript at chosen indices (analyzer/probe.c). */
static void test_macro_subscripts(void) {
  const char *src =
      "#define NX 100\n"
      "#define IDX(k, j, i) (((k) * 50 + (j)) * NX + (i))\n"
      "#define ROW(i, j) ((i) * n + (j))\n"
      "#define SQ(i) ((i) * (i))\n"
      "#define HALF(i) ((i) / 2)\n"
      "void f(int n, const double *restrict a, double *restrict b, double *restrict c) {\n"
      "#pragma acc parallel loop collapse(3)\n"
      "  for (int k = 1; k < 9; k++)\n"
      "    for (int j = 1; j < 49; j++)\n"
      "      for (int i = 1; i < 99; i++) {\n"
      "        b[IDX(k, j, i)] = a[IDX(k - 1, j + 1, i - 1)] + a[ROW(j, i)];\n"
      "        c[SQ(i)] = c[HALF(i)];\n"
      "      }\n"
      "}\n";
  sp_param p[] = {{"n", 777}};
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, p, 1, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  const sp_ref *w = ref_named(n, "b[IDX(k, j, i)]", SP_WRITE);
  const sp_ref *r = ref_named(n, "a[IDX(k - 1, j + 1, i - 1)]", SP_READ);
  const sp_ref *row = ref_named(n, "a[ROW(j, i)]", SP_READ);
  const sp_ref *sq = ref_named(n, "c[SQ(i)]", SP_WRITE);
  const sp_ref *half = ref_named(n, "c[HALF(i)]", SP_READ);
  CHECK(w && r && row && sq && half);
  if (!w || !r || !row || !sq || !half) return;
  CHECK(!w->irregular && !r->irregular && !row->irregular);
  CHECK_EQ_INT(w->offset.coef[0], 8 * 5000);
  CHECK_EQ_INT(w->offset.coef[1], 8 * 100);
  CHECK_EQ_INT(w->offset.coef[2], 8);
  CHECK_EQ_INT(w->offset.constant, 0);
  CHECK_EQ_INT(r->offset.constant, 8 * (-5000 + 100 - 1));
  CHECK_EQ_INT(row->offset.coef[1], 8 * 777); /* n from --param */
  CHECK_EQ_INT(row->offset.coef[2], 8);
  CHECK_EQ_INT(row->offset.coef[0], 0);
  CHECK(sq->irregular);   /* quadratic: the far points disagree with the affine fit */
  CHECK(half->irregular); /* division: likewise */
  sp_program_free(&prog);
}

static void test_guards(void) {
  const char *src =
      "#define N 64\n"
      "double a[N][N], b[N][N];\n"
      "void f(void) {\n"
      "#pragma acc parallel loop collapse(2)\n"
      "  for (int i = 0; i < N; i++)\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      if (i > 0 && j < N - 1) b[i][j] = a[i - 1][j + 1];\n"
      "      else b[i][j] = 0;\n"
      "      if (a[i][j] > 0) b[i][j] += 1;\n"
      "    }\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  if (prog.nnests != 1) return;
  sp_nest *n = &prog.nests[0];
  const sp_ref *r = ref_named(n, "a[i - 1][j + 1]", SP_READ);
  CHECK(r && r->nguards == 2);
  if (r && r->nguards == 2) {
    CHECK_EQ_INT(r->guards[0].cmp, SP_CMP_GE0); /* i - 1 >= 0 */
    CHECK_EQ_INT(r->guards[0].expr.coef[0], 1);
    CHECK_EQ_INT(r->guards[0].expr.constant, -1);
    CHECK_EQ_INT(r->guards[1].expr.coef[1], -1); /* N - 1 - j - 1 >= 0 */
    CHECK_EQ_INT(r->guards[1].expr.constant, 62);
    CHECK_NEAR(1 - r->guard_excluded, 63.0 * 63.0 / (64.0 * 64.0), 1e-12); /* i >= 1, j <= 62 */
  }
  /* the else branch of a conjunction runs unless all of the if's guards hold (a negated
   * group); the data-dependent if is unguarded, with a note */
  const sp_ref *e = NULL;
  for (int i = 0; i < n->nrefs; i++)
    if (n->refs[i].access == SP_WRITE && n->refs[i].nguards == 2 && n->refs[i].guards[0].negated_group)
      e = &n->refs[i];
  CHECK(e != NULL);
  if (e && r && r->nguards == 2) {
    CHECK(e->guards[1].negated_group == e->guards[0].negated_group);
    CHECK_EQ_INT(e->guards[0].expr.constant, r->guards[0].expr.constant);
    CHECK_EQ_INT(e->guards[1].expr.coef[1], r->guards[1].expr.coef[1]);
    CHECK_NEAR(e->guard_excluded, 1 - r->guard_excluded, 1e-12);
  }
  int unguarded = 0;
  for (int i = 0; i < n->nrefs; i++) unguarded += n->refs[i].nguards == 0;
  /* a, b | b | a (condition), b write: the read half of b[i][j] += 1 takes the value that
   * both branches stored, with no store between (repeat.c), as a compiler that sees both
   * branches store b[i][j] does */
  CHECK_EQ_INT(n->nrefs, 5);
  CHECK_EQ_INT(unguarded, 2);
  CHECK_EQ_INT(n->nnotes, 2);
  sp_program_free(&prog);
}

/* The share of iterations a reference's guards let through (what the ranking's extrapolation
 * counts executions with) against brute force: random conjunctions A and B of >= 0, == 0 and
 * != 0 conditions over rectangular and triangular loops, written as C and analyzed, in
 * `if (A) b = ..; else if (B) c = ..; else d = ..;`: b's guards are A, c's B and A negated,
 * d's both negated (two negated groups, by inclusion-exclusion); and for single conditions p and
 * q, `if (p || q) e = ..;`, whose guards are !p and !q negated. */
typedef struct tconj {
  int ng, ca[3], cb[3], cc[3], op[3], mod[3], rem[3];
} tconj;

/* ng conditions, or 1 to 3 where ng is 0; with parity, also `(..) % M == R` and `!=` with R of
 * either sign (C's % follows the sign of the expression) */
static void tconj_random(tconj *c, int ng, bool parity, char *text, size_t cap) {
  c->ng = ng ? ng : 1 + rand() % 3;
  text[0] = 0;
  for (int g = 0; g < c->ng; g++) {
    c->ca[g] = rand() % 7 - 3, c->cb[g] = rand() % 7 - 3, c->cc[g] = rand() % 41 - 20;
    c->op[g] = rand() % (parity ? 5 : 3);
    c->mod[g] = 2 + rand() % 4;
    c->rem[g] = rand() % (2 * c->mod[g] - 1) - (c->mod[g] - 1);
    static const char *const ops[] = {">=", "==", "!="};
    char part[96];
    if (c->op[g] >= 3)
      snprintf(part, sizeof part, "%s(%d * i + %d * j + %d) %% %d %s %d", g ? " && " : "", c->ca[g],
               c->cb[g], c->cc[g], c->mod[g], c->op[g] == 3 ? "==" : "!=", c->rem[g]);
    else
      snprintf(part, sizeof part, "%s%d * i + %d * j + %d %s 0", g ? " && " : "", c->ca[g], c->cb[g],
               c->cc[g], ops[c->op[g]]);
    strncat(text, part, cap - strlen(text) - 1);
  }
}

static bool tconj_holds(const tconj *c, int i, int j) {
  bool ok = true;
  for (int g = 0; g < c->ng; g++) {
    int v = c->ca[g] * i + c->cb[g] * j + c->cc[g];
    if (c->op[g] >= 3) ok &= (v % c->mod[g] == c->rem[g]) == (c->op[g] == 3);
    else ok &= c->op[g] == 0 ? v >= 0 : c->op[g] == 1 ? v == 0 : v != 0;
  }
  return ok;
}

/* The share of iterations each branch's reference runs against enumeration, for random nests
 * under random conjunctions (with parity: also parity guards) in if / else if / else and a
 * disjunction. */
static void guard_shares_brute_force(bool parity, int *cases, int *negated, int *mods) {
  for (int t = 0; t < 60; t++) {
    int n1 = 5 + rand() % 40, n2 = 5 + rand() % 40, tri = rand() % 2;
    tconj A, B, P, Q;
    char ca[256], cb[256], cp[96], cq[96];
    tconj_random(&A, 0, parity, ca, sizeof ca);
    tconj_random(&B, 0, parity, cb, sizeof cb);
    tconj_random(&P, 1, parity, cp, sizeof cp);
    tconj_random(&Q, 1, parity, cq, sizeof cq);
    char src[1024];
    snprintf(src, sizeof src,
             "double b[64][64], c[64][64], d[64][64], e[64][64];\n"
             "void f(void) {\n"
             "#pragma acc parallel loop\n"
             "  for (int i = 0; i < %d; i++)\n"
             "#pragma acc loop\n"
             "    for (int j = %s; j < %d; j++) {\n"
             "      if (%s) b[i][j] = 1.0;\n"
             "      else if (%s) c[i][j] = 1.0;\n"
             "      else d[i][j] = 1.0;\n"
             "      if (%s || %s) e[i][j] = 1.0;\n"
             "    }\n"
             "}\n",
             n1, tri ? "i" : "0", n2, ca, cb, cp, cq);
    long all = 0, held[4] = {0};
    for (int i = 0; i < n1; i++)
      for (int j = tri ? i : 0; j < n2; j++) {
        all++;
        bool a = tconj_holds(&A, i, j), b = tconj_holds(&B, i, j);
        held[0] += a;
        held[1] += !a && b;
        held[2] += !a && !b;
        held[3] += tconj_holds(&P, i, j) || tconj_holds(&Q, i, j);
      }
    if (all == 0) continue;
    sp_program prog;
    CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
    static const char *const names[] = {"b[i][j]", "c[i][j]", "d[i][j]", "e[i][j]"};
    for (int k = 0; k < 4; k++) {
      const sp_ref *r = prog.nnests == 1 ? ref_named(&prog.nests[0], names[k], SP_WRITE) : NULL;
      CHECK(r != NULL);
      double want = (double)held[k] / (double)all;
      if (r && r->nguards > 0) {
        CHECK_NEAR(1 - r->guard_excluded, want, 1e-12);
        (*cases)++;
        for (int g = 0; g < r->nguards; g++) {
          *negated += r->guards[g].negated_group != 0;
          *mods += r->guards[g].modulus != 0;
        }
      } else if (r) {
        CHECK(held[k] == all); /* a guard folded away only when always true */
      }
      if (r && fabs(1 - r->guard_excluded - want) > 1e-12) fprintf(stderr, "  case %d, %s: %s\n", t, names[k], src);
    }
    sp_program_free(&prog);
  }
}

static void test_guard_shares_brute_force(void) {
  srand(7);
  int cases = 0, negated = 0, mods = 0;
  guard_shares_brute_force(false, &cases, &negated, &mods);
  CHECK(cases >= 160);
  CHECK(negated >= 150);
  CHECK_EQ_INT(mods, 0);
  /* parity guards of either sign of expression and remainder, negated in else branches */
  srand(11);
  cases = negated = 0;
  guard_shares_brute_force(true, &cases, &negated, &mods);
  CHECK(cases >= 160);
  CHECK(mods >= 150);
}

/* Beyond 2^18 outer points the outer loops are taken in blocks by their middles: k <= i over
 * 2000^3 iterations lets (2000 + 1) / 2 of every 2000 through. */
static void test_guard_share_sampled(void) {
  /* with a parity guard on all three indices as well, half of those: (N + 1) / 4N, the outer
   * blocks taken a period (2) of iterations each */
  static const char *const conds[] = {"k <= i", "k <= i && (i + j + k) % 2 == 0"};
  static const double want[] = {2001.0 / 4000.0, 2001.0 / 8000.0};
  for (int c = 0; c < 2; c++) {
    char src[512];
    snprintf(src, sizeof src,
             "#define N 2000\n"
             "float a[N][N][N];\n"
             "void f(void) {\n"
             "#pragma acc parallel loop collapse(3)\n"
             "  for (int i = 0; i < N; i++)\n"
             "    for (int j = 0; j < N; j++)\n"
             "      for (int k = 0; k < N; k++)\n"
             "        if (%s) a[i][j][k] = 0;\n"
             "}\n",
             conds[c]);
    sp_program prog;
    CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
    const sp_ref *r = prog.nnests == 1 ? ref_named(&prog.nests[0], "a[i][j][k]", SP_WRITE) : NULL;
    CHECK(r && r->nguards == c + 1);
    if (r) CHECK_NEAR(1 - r->guard_excluded, want[c], 1e-6);
    sp_program_free(&prog);
  }
}

static bool nest_has_note(const sp_nest *n, const char *part) {
  for (int i = 0; i < n->nnotes; i++)
    if (strstr(n->notes[i].message, part)) return true;
  return false;
}

/* Red-black sweeps: `(i + j) % 2 == color` becomes a parity guard (the color 0 with a note where
 * its value is not known, else the value given), and the guard keeps the stencil's neighbours,
 * of the other color, off the written elements: both loops test parallel. Where the written and
 * read elements are of one color (a diagonal neighbour), or the guard is on i alone while the
 * neighbour moves along j, the dependence stays. */
static void test_parity_guards(void) {
  const char *src =
      "#define N 300\n"
      "double u[N][N], f[N][N];\n"
      "void sweep(int color) {\n"
      "#pragma acc kernels\n"
      "  for (int i = 1; i < N - 1; i++)\n"
      "    for (int j = 1; j < N - 1; j++)\n"
      "      if ((i + j) % 2 == color)\n"
      "        u[i][j] = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] + f[i][j];\n"
      "}\n";
  for (int given = 0; given < 2; given++) {
    sp_param p[] = {{"color", 1}};
    sp_program prog;
    sp_nest *n = analyze_one(src, p, given, &prog);
    if (!n) continue;
    CHECK(n->loops[0].parallel && n->loops[1].parallel);
    CHECK_EQ_INT(n->loops[0].parallel_reason, SP_PAR_TEST_PROVED);
    const sp_ref *w = ref_named(n, "u[i][j]", SP_WRITE);
    CHECK(w && w->nguards == 1);
    if (w && w->nguards == 1) {
      CHECK_EQ_INT(w->guards[0].modulus, 2);
      CHECK_EQ_INT(w->guards[0].remainder, given);
      CHECK_EQ_INT(w->guards[0].cmp, SP_CMP_EQ0);
      CHECK_EQ_INT(w->guards[0].expr.coef[0], 1);
      CHECK_EQ_INT(w->guards[0].expr.coef[1], 1);
      CHECK_NEAR(w->guard_excluded, 0.5, 1e-12); /* 298 x 298: even */
    }
    CHECK(nest_has_note(n, "--param color=VALUE") == !given);
    sp_program_free(&prog);
  }
  /* a bare remainder is its != 0; under ! its == 0; a constant one is no parity guard */
  const char *bare =
      "#define N 64\n"
      "double u[N][N];\n"
      "void g(void) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++)\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      if ((i + j) % 2) u[i][j] = 1.0;\n"
      "      if (!(i % 4)) u[i][j] = 2.0;\n"
      "      if (N % 2 == 0) u[i][j] = 3.0;\n"
      "    }\n"
      "}\n";
  sp_program bprog;
  sp_nest *bn = analyze_one(bare, NULL, 0, &bprog);
  int writes = 0;
  for (int r = 0; bn && r < bn->nrefs; r++) {
    const sp_ref *x = &bn->refs[r];
    if (x->access != SP_WRITE) continue;
    static const int64_t mod[3] = {2, 4, 0};
    static const sp_cmp cmp[3] = {SP_CMP_NE0, SP_CMP_EQ0, SP_CMP_EQ0};
    static const double share[3] = {0.5, 0.25, 1};
    CHECK(writes < 3 && x->nguards == 1);
    if (writes < 3 && x->nguards == 1) {
      CHECK_EQ_INT(x->guards[0].modulus, mod[writes]);
      CHECK_EQ_INT(x->guards[0].cmp, cmp[writes]);
      CHECK_NEAR(1 - x->guard_excluded, share[writes], 1e-12);
    }
    writes++;
  }
  CHECK_EQ_INT(writes, 3);
  if (bn) sp_program_free(&bprog);
  static const char *const kept[] = {
      /* one color: (i - 1) + (j - 1) has i + j's parity */
      "u[i][j] = u[i - 1][j - 1]",
      /* parity of i alone: the j neighbour shares it */
      "u[i][j] = u[i][j - 1]"};
  static const char *const conds[] = {"(i + j) % 2 == 0", "i % 2 != 1"};
  for (int k = 0; k < 2; k++) {
    char s2[512];
    snprintf(s2, sizeof s2,
             "#define N 300\n"
             "double u[N][N];\n"
             "void g(void) {\n"
             "#pragma acc kernels\n"
             "  for (int i = 1; i < N - 1; i++)\n"
             "    for (int j = 1; j < N - 1; j++)\n"
             "      if (%s) %s;\n"
             "}\n",
             conds[k], kept[k]);
    sp_program prog;
    sp_nest *n = analyze_one(s2, NULL, 0, &prog);
    if (!n) continue;
    /* the diagonal: i carries it; the j neighbour: j carries it */
    CHECK(n->loops[k].dependence != NULL && !n->loops[k].parallel);
    CHECK(n->loops[1 - k].parallel);
    sp_program_free(&prog);
  }
}

/* Soundness of the parity rule against enumeration: random pairs of a write and a read of one
 * array under one random parity guard (of either sign where C's % then differs). Where some two
 * iterations touch one element with the guard holding at both, differing first at loop L, loop
 * L must not test parallel. The rule must also prove independent ones the plain test cannot. */
static void test_parity_dependences_brute_force(void) {
  srand(5);
  int proven = 0, dependent = 0;
  for (int t = 0; t < 300; t++) {
    int n1 = 4 + rand() % 9, n2 = 4 + rand() % 9, M = 2 + rand() % 3, rem = rand() % M;
    int a = rand() % 5 - 1, b = rand() % 5 - 1, c = rand() % 7 - 1;
    int p[2] = {rand() % 5 - 2, rand() % 5 - 2}, q[2] = {rand() % 5 - 2, rand() % 5 - 2};
    bool ne = rand() % 4 == 0 && M == 2;
    char src[768];
    snprintf(src, sizeof src,
             "double u[20][20];\n"
             "void g(void) {\n"
             "#pragma acc kernels\n"
             "  for (int i = 2; i < %d; i++)\n"
             "    for (int j = 2; j < %d; j++)\n"
             "      if ((%d * i + %d * j + %d) %% %d %s %d) u[i + %d][j + %d] = u[i + %d][j + %d];\n"
             "}\n",
             n1, n2, a, b, c, M, ne ? "!=" : "==", rem, p[0], p[1], q[0], q[1]);
    bool dep[2] = {false, false};
    for (int xi = 2; xi < n1; xi++)
      for (int xj = 2; xj < n2; xj++)
        for (int yi = 2; yi < n1; yi++)
          for (int yj = 2; yj < n2; yj++) {
            int vx = (a * xi + b * xj + c) % M, vy = (a * yi + b * yj + c) % M;
            if ((vx == rem) == ne || (vy == rem) == ne) continue;
            if (xi + p[0] != yi + q[0] || xj + p[1] != yj + q[1]) continue;
            if (xi != yi) dep[0] = true;
            else if (xj != yj) dep[1] = true;
          }
    sp_program prog;
    sp_nest *n = analyze_one(src, NULL, 0, &prog);
    if (!n) continue;
    for (int L = 0; L < 2; L++) {
      if (dep[L]) {
        dependent++;
        CHECK(!n->loops[L].parallel);
        if (n->loops[L].parallel) fprintf(stderr, "  loop %d:\n%s", L, src);
      } else {
        proven += n->loops[L].parallel;
      }
    }
    sp_program_free(&prog);
  }
  fprintf(stderr, "  %d loops carry a dependence, %d proven free\n", dependent, proven);
  CHECK(dependent >= 70);
  CHECK(proven >= 420); /* 339 without the parity rule */
}

/* A condition that needs a run-time value says which and how to give it; given, it is a guard
 * (a plain one and a parity one's modulus). A value loaded from memory stays data-dependent. */
static void test_unknown_condition_note(void) {
  const char *src =
      "#define N 256\n"
      "double u[N][N];\n"
      "void f(int n, int m) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++)\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      if (i < n) u[i][j] = 1.0;\n"
      "      if ((i + j) % m == 0) u[i][j] = 2.0;\n"
      "      if (u[i][j] > 0.5) u[i][j] = 3.0;\n"
      "    }\n"
      "}\n";
  for (int given = 0; given < 2; given++) {
    sp_param p[] = {{"n", 100}, {"m", 3}};
    sp_program prog;
    sp_nest *n = analyze_one(src, p, given ? 2 : 0, &prog);
    if (!n) continue;
    CHECK(nest_has_note(n, "needs the value of 'n': give it with --param n=VALUE") == !given);
    CHECK(nest_has_note(n, "needs the value of 'm': give it with --param m=VALUE") == !given);
    CHECK(nest_has_note(n, "'u[i][j] > 0.5' is not affine in the loop indices (data-dependent)"));
    int guarded = 0;
    for (int r = 0; r < n->nrefs; r++)
      if (n->refs[r].access == SP_WRITE) guarded += n->refs[r].nguards > 0;
    CHECK_EQ_INT(guarded, given ? 2 : 0);
    sp_program_free(&prog);
  }
}

/* Each loop's floating-point work, counted by hand: fused multiply-adds, divisions, square
 * roots and special functions by precision; chains through the body's scalars; nested loops
 * apart; integer arithmetic not at all. */
static void test_fp_work(void) {
  const char *src =
      "#include <math.h>\n"
      "#define N 64\n"
      "double a[N][N], b[N][N];\n"
      "float f[N];\n"
      "void g(double s) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++) {\n"
      "    double acc = 0.0;\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      double d = a[i][j] - b[i][j];\n"          /* 1 (sub) */
      "      double q = d * d + s;\n"                  /* 1 (fma), chain 2 */
      "      double r = a[j][i] / sqrt(q);\n"          /* sqrt, div, chain 2 + sqrt + div */
      "      acc += r * d;\n"                          /* 1 (fma), chain 3 + sqrt + div */
      "      int k = i * j + 3;\n"                     /* integers: nothing */
      "      if (d > 0.0) b[i][j] = exp(d) * 2.0 + k;\n" /* cmp 1, exp, mul+add fused 1 */
      "    }\n"
      "    f[i] = sqrtf(f[i]) * 0.5f + powf(f[i], 2.0f) / 3.0f;\n" /* fp32: sqrt, 2 special, div, fma */
      "    a[i][0] = acc;\n"
      "  }\n"
      "}\n";
  sp_program prog;
  sp_nest *n = analyze_one(src, NULL, 0, &prog);
  if (!n) return;
  CHECK_EQ_INT(n->nloops, 2);
  const sp_fp_work *outer = &n->loops[0].fp, *inner = &n->loops[1].fp;
  /* inner: sub, fma, fma (acc), cmp, fma (exp(d) * 2.0 + k); sqrt, div; exp */
  CHECK_NEAR(inner->ops[SP_FP64_SIMPLE], 5, 0);
  CHECK_NEAR(inner->ops[SP_FP64_DIV], 1, 0);
  CHECK_NEAR(inner->ops[SP_FP64_SQRT], 1, 0);
  CHECK_NEAR(inner->ops[SP_FP64_SPECIAL], 1, 0);
  for (int k = SP_FP32_SIMPLE; k < SP_FP_KINDS; k++) CHECK_NEAR(inner->ops[k], 0, 0);
  /* the longest chain: d, q, sqrt, div, acc += r * d */
  CHECK_NEAR(inner->chain[SP_FP64_SIMPLE], 3, 0);
  CHECK_NEAR(inner->chain[SP_FP64_DIV], 1, 0);
  CHECK_NEAR(inner->chain[SP_FP64_SQRT], 1, 0);
  CHECK_NEAR(inner->chain[SP_FP64_SPECIAL], 0, 0);
  /* outer: sqrtf(f) * 0.5f + powf(...) / 3.0f: sqrt, pow (2 special), div, one fma */
  CHECK_NEAR(outer->ops[SP_FP32_SIMPLE], 1, 0);
  CHECK_NEAR(outer->ops[SP_FP32_SQRT], 1, 0);
  CHECK_NEAR(outer->ops[SP_FP32_SPECIAL], 2, 0);
  CHECK_NEAR(outer->ops[SP_FP32_DIV], 1, 0);
  CHECK_NEAR(outer->ops[SP_FP64_SIMPLE], 0, 0);
  /* its chain: pow (2 special, weight 24) then the division, then the fma */
  CHECK_NEAR(outer->chain[SP_FP32_SPECIAL], 2, 0);
  CHECK_NEAR(outer->chain[SP_FP32_DIV], 1, 0);
  CHECK_NEAR(outer->chain[SP_FP32_SIMPLE], 1, 0);
  CHECK_NEAR(outer->chain[SP_FP32_SQRT], 0, 0);
  sp_program_free(&prog);

  /* a value carried over from the previous iteration starts a chain: the recurrence is one
   * operation an iteration, not the loop's whole sum */
  const char *rec =
      "#define N 64\n"
      "double x[N][N], y[N];\n"
      "void h(void) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++) {\n"
      "    double s = 0.0, t = 1.0;\n"
      "    for (int j = 0; j < N; j++) { s += x[i][j]; t = t * x[i][j]; t = t * 2.0; }\n"
      "    y[i] = s + t;\n"
      "  }\n"
      "}\n";
  n = analyze_one(rec, NULL, 0, &prog);
  if (!n) return;
  CHECK_NEAR(n->loops[1].fp.ops[SP_FP64_SIMPLE], 3, 0);
  CHECK_NEAR(n->loops[1].fp.chain[SP_FP64_SIMPLE], 2, 0); /* t's two multiplies */
  CHECK_NEAR(n->loops[0].fp.ops[SP_FP64_SIMPLE], 1, 0);
  sp_program_free(&prog);

  /* a body of 70 statements: every one counted */
  char many[8192];
  int len = snprintf(many, sizeof many,
                     "double x[64][64];\nvoid m(void) {\n#pragma acc parallel loop\n"
                     "  for (int i = 0; i < 64; i++) {\n");
  for (int k = 0; k < 70; k++) len += snprintf(many + len, sizeof many - (size_t)len, "    x[i][%d] *= 2.0;\n", k % 64);
  snprintf(many + len, sizeof many - (size_t)len, "  }\n}\n");
  n = analyze_one(many, NULL, 0, &prog);
  if (!n) return;
  CHECK_NEAR(n->loops[0].fp.ops[SP_FP64_SIMPLE], 70, 0);
  CHECK_NEAR(n->loops[0].fp.chain[SP_FP64_SIMPLE], 1, 0);
  sp_program_free(&prog);
}

static void test_dependences(void) {
  const char *src =
      "#define N 1000\n"
      "double a[N], b[N], c[N][N];\n"
      "void f(void) {\n"
      "  double s = 0;\n"
      "#pragma acc kernels\n"
      "  {\n"
      "    for (int i = 1; i < N; i++) a[i] = a[i - 1] + 1;\n"
      "    for (int i = 0; i < N; i++) b[i] = a[i] * 2;\n"
      "    for (int i = 0; i < N; i++) s += b[i];\n"
      "    for (int i = 0; i < N; i++) b[2 * i % 1 + 2 * i / 2] = 0;\n"
      "    for (int i = 0; i < N / 2; i++) a[2 * i] = a[2 * i + 1];\n"
      "    for (int j = 1; j < N; j++)\n"
      "      for (int i = 0; i < N; i++) c[j][i] = c[j - 1][i];\n"
      "  }\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 1; i < N; i++) b[i] = b[i - 1];\n"
      "#pragma acc parallel loop reduction(+:s)\n"
      "  for (int i = 0; i < N; i++) s += b[i];\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 8);
  if (prog.nnests != 8) return;
  CHECK(!prog.nests[0].loops[0].parallel); /* a[i] = a[i-1] */
  CHECK(prog.nests[0].loops[0].dependence && strstr(prog.nests[0].loops[0].dependence, "1 iter"));
  CHECK(prog.nests[1].loops[0].parallel);
  CHECK_EQ_INT(prog.nests[1].loops[0].parallel_reason, SP_PAR_TEST_PROVED);
  CHECK(!prog.nests[2].loops[0].parallel); /* s += b[i] without reduction */
  CHECK(prog.nests[2].loops[0].dependence &&
        strstr(prog.nests[2].loops[0].dependence, "scalar 's'"));
  CHECK(prog.nests[4].loops[0].parallel); /* even writes, odd reads: GCD test */
  CHECK(!prog.nests[5].loops[0].parallel); /* j carries c[j][i] = c[j-1][i] */
  CHECK(prog.nests[5].loops[1].parallel);  /* i does not */
  /* declared parallel with a proven dependence: kept parallel, with a warning */
  CHECK(prog.nests[6].loops[0].parallel);
  CHECK(prog.nests[6].loops[0].dependence != NULL);
  CHECK(last_diag.count[SP_WARNING] >= 1);
  CHECK(prog.nests[7].loops[0].parallel && !prog.nests[7].loops[0].dependence);
  sp_program_free(&prog);
}

static void test_all_loops_omp_host_loop(void) {
  const char *src =
      "#define N 128\n"
      "double u[2][N][N];\n"
      "void f(int steps) {\n"
      "  for (int t = 0; t < steps; t++) {\n"
      "#pragma omp target teams distribute parallel for collapse(2)\n"
      "    for (int i = 0; i < N; i++)\n"
      "      for (int j = 0; j < N; j++) u[t % 2][i][j] = u[(t + 1) % 2][i][j];\n"
      "  }\n"
      "  for (int i = 0; i < N; i++) u[0][i][0] = 1;\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  if (prog.nnests >= 1) {
    sp_nest *n = &prog.nests[0];
    CHECK_EQ_INT(n->construct, SP_CONSTRUCT_OMP_TARGET);
    CHECK(n->loops[0].parallel && n->loops[1].parallel);
    /* t is taken at its first value 0: u[0] written, u[1] read */
    CHECK_EQ_INT(n->refs[0].offset.constant, 128 * 128 * 8);
    CHECK_EQ_INT(n->refs[1].offset.constant, 0);
  }
  sp_program_free(&prog);
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, true, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 2);
  if (prog.nnests == 2) {
    CHECK_EQ_INT(prog.nests[1].construct, SP_CONSTRUCT_NONE);
    CHECK(prog.nests[1].loops[0].parallel);
  }
  sp_program_free(&prog);
}

static void test_errors(void) {
  sp_program prog;
  const char *needs_n =
      "void f(int n, double *a) {\n#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
  CHECK_EQ_INT(analyze(needs_n, NULL, 0, NULL, 0, false, &prog), SP_EXIT_VALUE);
  CHECK_EQ_INT(last_diag.count[SP_ERROR], 1);
  sp_program_free(&prog);

  CHECK_EQ_INT(analyze("int f( {", NULL, 0, NULL, 0, false, &prog), SP_EXIT_INPUT);
  sp_program_free(&prog);
  CHECK_EQ_INT(analyze("int x;\n", NULL, 0, NULL, 0, false, &prog), SP_EXIT_NO_NESTS);
  sp_program_free(&prog);

  const char *uses_macro =
      "double a[N];\nvoid f(void) {\n#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++) a[i] = 0;\n}\n";
  CHECK_EQ_INT(analyze(uses_macro, NULL, 0, NULL, 0, false, &prog), SP_EXIT_INPUT);
  sp_program_free(&prog);
  const char *def[] = {"-DN=512"};
  CHECK_EQ_INT(analyze(uses_macro, def, 1, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK(prog.nnests == 1 && prog.nests[0].loops[0].trip_max == 512);
  sp_program_free(&prog);

  const char *with_while =
      "void f(int *a) {\n#pragma acc parallel loop\n"
      "  for (int i = 0; i < 10; i++) { int k = 0; while (a[k]) k++; a[i] = k; }\n}\n";
  CHECK_EQ_INT(analyze(with_while, NULL, 0, NULL, 0, false, &prog), SP_EXIT_NO_NESTS);
  CHECK(last_diag.count[SP_WARNING] >= 1);
  sp_program_free(&prog);
}


/* Loads the compiler does not issue (analyzer/repeat.c): repeats with no store between,
 * forwarding from a store, guards and stores that keep a load, and loop-invariant loads hoisted
 * out of a sequential loop that stores nothing. */
static int count_refs(const sp_nest *n, const char *text, sp_access acc) {
  int k = 0;
  for (int i = 0; i < n->nrefs; i++) k += strcmp(n->refs[i].text, text) == 0 && n->refs[i].access == acc;
  return k;
}

static void test_repeated_and_hoisted_loads(void) {
  const char *src =
      "void f(int n, double *a, double *b, double *c, int *idx) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 1; i < n; i++) {\n"
      "    double s = a[i] * a[i] + a[i - 1];\n"       /* a[i] twice: once */
      "    b[i] = s;\n"                                 /* a store: ends the reuse */
      "    c[i] = a[i] + b[i] + b[i];\n"               /* a[i] again (after a store); b[i] forwarded */
      "    if (i > 5) c[i] = c[i] + a[i + 1];\n"       /* guarded: c[i] is loaded (other guards) */
      "    c[i] = c[i] + b[idx[i]] + b[idx[i]];\n"     /* irregular b[idx[i]]: both kept; idx[i] once */
      "    double t = 0.0;\n"
      "    for (int k = 0; k < n; k++)\n"
      "      t += a[k] * b[i] * a[i] * b[i];\n"        /* b[i] once, hoisted with a[i]; a[k] stays */
      "    for (int k = 0; k < n; k++)\n"
      "      c[k] = a[i];\n"                            /* a loop that stores: a[i] stays inside */
      "    a[0] = t;\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 100}};
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, p, 1, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  if (prog.nnests != 1) return;
  const sp_nest *n = &prog.nests[0];
  CHECK_EQ_INT(count_refs(n, "a[i]", SP_READ), 4); /* line 4, line 6, hoisted from loop 1, loop 2 */
  CHECK_EQ_INT(count_refs(n, "b[i]", SP_READ), 1); /* line 11's, hoisted; line 6's forwarded */
  CHECK_EQ_INT(count_refs(n, "c[i]", SP_READ), 2);
  CHECK_EQ_INT(count_refs(n, "b[idx[i]]", SP_READ), 2);
  CHECK_EQ_INT(count_refs(n, "idx[i]", SP_READ), 1);
  CHECK_EQ_INT(count_refs(n, "a[k]", SP_READ), 1);
  /* the hoisted loads run once per i, before the k loop's a[k]; the stored loop keeps a[i] */
  int hoisted = 0, a_k = -1, a_i_in_store_loop = 0;
  for (int i = 0; i < n->nrefs; i++) {
    const sp_ref *r = &n->refs[i];
    if (strcmp(r->text, "a[k]") == 0) a_k = i;
    if (r->access == SP_READ && r->loc.line == 11 && r->nloops == 1 && (a_k < 0)) hoisted++;
    if (strcmp(r->text, "a[i]") == 0 && r->loc.line == 13) a_i_in_store_loop = r->nloops;
  }
  CHECK_EQ_INT(hoisted, 2);
  CHECK(a_k > 0 && n->refs[a_k].nloops == 2);
  CHECK_EQ_INT(a_i_in_store_loop, 2);
  int notes = 0;
  for (int i = 0; i < n->nnotes; i++)
    notes += strstr(n->notes[i].message, "counted as none") != NULL ||
             strstr(n->notes[i].message, "counted once before the loop") != NULL;
  CHECK_EQ_INT(notes, 2);
  sp_program_free(&prog);
}

/* A load of what the previous iteration of its sequential loop stored is loaded once, before the
 * loop, at the loop's first iteration (compilers keep the value in a register): Thomas's back
 * substitution x[i] = d[i] - c[i] * x[i + 1] counting down, whose first x[i + 1] is the value
 * stored before the loop (dropped too), and a running sum y[k] = y[k - 1] + a[k] counting up
 * (y[0] loaded once). Not where the load reads two iterations back, or the loop stores the
 * array twice. */
static void test_carried_loads(void) {
  const char *src =
      "void f(int n, int m, const double *c, const double *d, double *x, double *y,\n"
      "       double *z, double *w, const double *a) {\n"
      "#pragma acc parallel loop\n"
      "  for (int s = 0; s < n; s++) {\n"
      "    x[(m - 1) * n + s] = d[(m - 1) * n + s];\n"
      "    for (int i = m - 2; i >= 0; i--)\n"
      "      x[i * n + s] = d[i * n + s] - c[i * n + s] * x[(i + 1) * n + s];\n"
      "    for (int k = 1; k < m; k++)\n"
      "      y[k * n + s] = y[(k - 1) * n + s] + a[k * n + s];\n"
      "    for (int k = 2; k < m; k++)\n"
      "      z[k * n + s] = z[(k - 2) * n + s] + a[k * n + s];\n"
      "    for (int k = 1; k < m; k++) {\n"
      "      w[k * n + s] = w[(k - 1) * n + s] + a[k * n + s];\n"
      "      w[s] = 0.0;\n"
      "    }\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 1000}, {"m", 64}};
  sp_program prog;
  const sp_nest *n = analyze_one(src, p, 2, &prog);
  if (!n) return;
  CHECK_EQ_INT(count_refs(n, "x[(i + 1) * n + s]", SP_READ), 0); /* moved, then the store's */
  const sp_ref *y = ref_named(n, "y[(k - 1) * n + s]", SP_READ);
  CHECK(y && y->nloops == 1 && y->offset.constant == 0); /* y[0 * n + s], before the loop */
  const sp_ref *z = ref_named(n, "z[(k - 2) * n + s]", SP_READ);
  CHECK(z && z->nloops == 2);
  const sp_ref *w = ref_named(n, "w[(k - 1) * n + s]", SP_READ);
  CHECK(w && w->nloops == 2);
  int notes = 0;
  for (int i = 0; i < n->nnotes; i++)
    notes += strstr(n->notes[i].message, "previous iteration of their sequential loop") != NULL;
  CHECK_EQ_INT(notes, 1);
  sp_program_free(&prog);
}

/* `if (c) continue;` directly in a loop's body guards the statements after it with !c: a
 * disjunction of edges becomes a conjunction of != 0 guards, a conjunction a negated group; a
 * data-dependent c, or a continue inside an inner block, leaves them unguarded with a note.
 * The statements of `if (c) { ...; continue; }` before the continue run under c. */
static void test_continue_guards(void) {
  const char *src =
      "void f(int n, const double *a, double *b, double *c, double *d, double *e) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++) {\n"
      "#pragma acc loop\n"
      "    for (int j = 0; j < n; j++) {\n"
      "      c[i * n + j] = 1.0;\n"
      "      if (i == 0 || j == n - 1) continue;\n"
      "      b[i * n + j] = a[(i - 1) * n + j + 1];\n"
      "      if (i > 5 && j < 3) { continue; }\n"
      "      d[i * n + j] = 2.0;\n"
      "      if (a[i * n + j] > 0.0) continue;\n"
      "      e[i * n + j] = 3.0;\n"
      "      { if (j == 7) continue; }\n"
      "      e[j * n + i] = 4.0;\n"
      "    }\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 64}};
  sp_program prog;
  const sp_nest *n = analyze_one(src, p, 1, &prog);
  if (!n) return;
  const sp_ref *c = ref_named(n, "c[i * n + j]", SP_WRITE), *b = ref_named(n, "b[i * n + j]", SP_WRITE);
  const sp_ref *d = ref_named(n, "d[i * n + j]", SP_WRITE), *e = ref_named(n, "e[i * n + j]", SP_WRITE);
  const sp_ref *e2 = ref_named(n, "e[j * n + i]", SP_WRITE);
  CHECK(c && b && d && e && e2);
  if (!c || !b || !d || !e || !e2) return;
  CHECK_EQ_INT(c->nguards, 0);
  CHECK_EQ_INT(b->nguards, 2);
  CHECK(b->nguards == 2 && b->guards[0].cmp == SP_CMP_NE0 && !b->guards[0].negated_group);
  CHECK_NEAR(1 - b->guard_excluded, 63.0 * 63.0 / (64.0 * 64.0), 1e-12);
  CHECK_EQ_INT(d->nguards, 4); /* b's two and the negated group i > 5 && j < 3 */
  long held = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) held += i != 0 && j != 63 && !(i > 5 && j < 3);
  CHECK_NEAR(1 - d->guard_excluded, (double)held / 4096.0, 1e-12);
  CHECK_EQ_INT(e->nguards, 4); /* the data-dependent continue adds none */
  CHECK_EQ_INT(e2->nguards, 4); /* nor the one in an inner block */
  int notes = 0;
  for (int i = 0; i < n->nnotes; i++) notes += strstr(n->notes[i].message, "continue") != NULL;
  CHECK_EQ_INT(notes, 2);
  sp_program_free(&prog);

  /* `if (c) { copy; continue; }`: the copy runs under c (a negated group of !c's conjunction),
   * the rest under !c */
  const char *src2 =
      "void g(int n, const double *a, double *b) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < n; i++) {\n"
      "#pragma acc loop\n"
      "    for (int j = 0; j < n; j++) {\n"
      "      if (i == 0 || j == n - 1) {\n"
      "        b[i * n + j] = a[i * n + j];\n"
      "        continue;\n"
      "      }\n"
      "      b[i * n + j] = a[(i - 1) * n + j + 1];\n"
      "    }\n"
      "  }\n"
      "}\n";
  n = analyze_one(src2, p, 1, &prog);
  if (!n) return;
  const sp_ref *copy = ref_named(n, "a[i * n + j]", SP_READ), *st = ref_named(n, "a[(i - 1) * n + j + 1]", SP_READ);
  CHECK(copy && st);
  if (copy && st) {
    CHECK(copy->nguards == 2 && copy->guards[0].negated_group && copy->guards[1].negated_group);
    CHECK(st->nguards == 2 && !st->guards[0].negated_group);
    CHECK_NEAR(copy->guard_excluded, 1 - st->guard_excluded, 1e-12);
    CHECK_NEAR(1 - st->guard_excluded, 63.0 * 63.0 / 4096.0, 1e-12);
  }
  sp_program_free(&prog);
}

static const char *array_of(const sp_nest *n, const sp_ref *r) {
  return r ? n->arrays[r->array].name : "(none)";
}

/* A pointer declared in the nest is its initializer: row = a + i*N makes row[j] an access to a
 * at i*N + j (it was an array of its own at j, the same sector for every lane); so does
 * &a[i*N] (it was a pointer loaded from memory, an array "&a[i*N][*]" of its own). One that is
 * assigned inside a loop (p++, k += 1) differs between that loop's iterations. */
static void test_local_pointers(void) {
  const char *src =
      "#define N 64\n"
      "void f(const double *a, double *b, double (*m)[N], const double **rows) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 1; i < N - 1; i++) {\n"
      "    const double *row = a + i * N;\n"
      "    double *up = m[i - 1], *dn = m[i + 1];\n"           /* rows of m: addresses, no loads */
      "    const double *r = rows[i];\n"                      /* a pointer loaded from memory */
      "    const double *p = a + i;\n"
      "    const double *am = &a[i * N - N], *c2 = &m[i][1];\n" /* addresses taken, no loads */
      "    int k = i * N;\n"
      "    double s = 0.0;\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      int q = j + 1;\n"
      "      s += row[j] + up[j] * dn[j] + r[j] + *p + b[k] + b[q] + am[j] + c2[j];\n"
      "      q = 0;\n"                                        /* after its use: b[q] stays j + 1 */
      "      p++;\n"
      "      k += 2;\n"
      "    }\n"
      "    b[i] = s;\n"
      "  }\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  if (prog.nnests != 1) return;
  const sp_nest *n = &prog.nests[0];
  const sp_ref *row = ref_named(n, "row[j]", SP_READ);
  CHECK_EQ_STR(array_of(n, row), "a");
  if (row) {
    CHECK_EQ_INT(row->offset.coef[0], 8 * 64);
    CHECK_EQ_INT(row->offset.coef[1], 8);
    CHECK(!row->irregular);
  }
  const sp_ref *up = ref_named(n, "up[j]", SP_READ), *dn = ref_named(n, "dn[j]", SP_READ);
  CHECK_EQ_STR(array_of(n, up), "m");
  CHECK_EQ_STR(array_of(n, dn), "m");
  if (up && dn) {
    CHECK_EQ_INT(up->offset.coef[0], 8 * 64);
    CHECK_EQ_INT(up->offset.constant, -8 * 64);
    CHECK_EQ_INT(dn->offset.constant, 8 * 64);
    CHECK_EQ_INT(dn->offset.coef[1], 8);
  }
  CHECK_EQ_INT(count_refs(n, "m[i - 1]", SP_READ), 0);
  CHECK_EQ_INT(count_refs(n, "rows[i]", SP_READ), 1); /* at the declaration, not again at r[j] */
  const sp_ref *r = ref_named(n, "r[j]", SP_READ);
  CHECK(r && r->irregular);
  const sp_ref *p = ref_named(n, "*p", SP_READ);
  CHECK(p && p->irregular && strstr(p->irregular_why, "'p' is assigned inside loop j"));
  const sp_ref *bk = ref_named(n, "b[k]", SP_READ);
  CHECK(bk && bk->irregular && strstr(bk->irregular_why, "'k' is assigned inside loop j"));
  const sp_ref *bq = ref_named(n, "b[q]", SP_READ);
  CHECK(bq && !bq->irregular);
  if (bq) {
    CHECK_EQ_INT(bq->offset.coef[1], 8);
    CHECK_EQ_INT(bq->offset.constant, 8);
  }
  const sp_ref *am = ref_named(n, "am[j]", SP_READ), *c2 = ref_named(n, "c2[j]", SP_READ);
  CHECK_EQ_STR(array_of(n, am), "a");
  CHECK_EQ_STR(array_of(n, c2), "m");
  if (am && c2) {
    CHECK(!am->irregular && !c2->irregular);
    CHECK_EQ_INT(am->offset.coef[0], 8 * 64);
    CHECK_EQ_INT(am->offset.constant, -8 * 64);
    CHECK_EQ_INT(am->offset.coef[1], 8);
    CHECK_EQ_INT(c2->offset.coef[0], 8 * 64);
    CHECK_EQ_INT(c2->offset.constant, 8);
  }
  int followed = 0;
  for (int i = 0; i < n->nnotes; i++)
    followed += strstr(n->notes[i].message, "is followed to its initialization") != NULL;
  CHECK_EQ_INT(followed, 6); /* row, up, dn, am, c2, and r to the loaded rows[i] */
  sp_program_free(&prog);
}

/* A pointer declared in the nest has no integer value: a guard on it is data-dependent and a
 * subscript built from it irregular. (Followed as an address, it read as 0 here: the guard
 * became '0 != 0' and b[i + (long)p] was b[i].) */
static void test_pointer_not_an_integer(void) {
  const char *src =
      "#define N 64\n"
      "void f(const double *a, double *b) {\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < N; i++) {\n"
      "    const double *p = a + i * N;\n"
      "    if (p != 0) b[i] = p[1];\n"
      "    b[i + (long)p] = 1.0;\n"
      "  }\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 1);
  if (prog.nnests != 1) return;
  const sp_nest *n = &prog.nests[0];
  const sp_ref *p1 = ref_named(n, "p[1]", SP_READ);
  CHECK(p1 && p1->nguards == 0 && !p1->irregular);
  const sp_ref *bp = ref_named(n, "b[i + (long)p]", SP_WRITE);
  CHECK(bp && bp->irregular && strstr(bp->irregular_why, "'p' is a pointer"));
  sp_program_free(&prog);
}


/* analyzer/imperfect.c: the loop alone among statements in a band loop's body joins the band;
 * the statements' references run at its first (before it) or last (after it) iteration. */
static void test_imperfect_nests(void) {
  const char *src =
      "void f(int n, double *restrict a, double *restrict x, const double *restrict y) {\n"
      "#pragma acc parallel loop gang\n"
      "  for (int i = 0; i < n; i++) {\n"
      "    double s = x[i];\n"
      "#pragma acc loop vector reduction(+:s)\n"
      "    for (int j = 2; j < n; j++)\n"
      "      s += a[i * n + j] * y[j];\n"
      "    x[i] = s;\n"
      "  }\n"
      "}\n";
  sp_param p[] = {{"n", 100}};
  sp_program prog;
  sp_nest *n = analyze_one(src, p, 1, &prog);
  if (n) {
    CHECK(n->loops[1].band && n->loops[1].imperfect && !n->loops[0].imperfect);
    CHECK_EQ_INT(n->band_iterations, 100 * 98);
    const sp_ref *pre = ref_named(n, "x[i]", SP_READ), *post = ref_named(n, "x[i]", SP_WRITE);
    const sp_ref *body = ref_named(n, "y[j]", SP_READ);
    if (pre && post && body) {
      CHECK_EQ_INT(pre->nloops, 2);
      CHECK_EQ_INT(pre->loops[1], 1);
      CHECK_EQ_INT(pre->nguards, 1);
      /* j - 2 == 0 before the loop, j - 99 == 0 after it */
      CHECK(pre->guards[0].cmp == SP_CMP_EQ0 && pre->guards[0].expr.coef[1] == 1 &&
            pre->guards[0].expr.coef[0] == 0 && pre->guards[0].expr.constant == -2);
      CHECK(post->nguards == 1 && post->guards[0].expr.constant == -99);
      CHECK(fabs(pre->guard_excluded - 97.0 / 98.0) < 1e-9);
      CHECK_EQ_INT(body->nguards, 0);
    }
  }
  sp_program_free(&prog);
  /* not joined: a sequential inner loop, two inner loops, an inner loop that can run no
   * iteration, a step of 2 with a statement after the loop */
  const char *kept[] = {
      "for (int i = 0; i < 64; i++) { double s = 0;\n for (int j = 0; j < 64; j++) s += a[i][j];\n"
      " b[i][0] = s; }",
      "for (int i = 0; i < 64; i++) { b[i][0] = 1;\n#pragma acc loop\n for (int j = 0; j < 64; j++)"
      " a[i][j] = 0;\n#pragma acc loop\n for (int j = 0; j < 64; j++) b[i][j] = 0; }",
      "for (int i = 0; i < 64; i++) { b[i][0] = 1;\n#pragma acc loop\n for (int j = 0; j < i; j++)"
      " a[i][j] = 0; }",
      "for (int i = 0; i < 64; i++) {\n#pragma acc loop\n for (int j = 0; j < 64; j += 2)"
      " a[i][j] = 0;\n b[i][0] = 1; }",
  };
  for (size_t c = 0; c < sizeof kept / sizeof kept[0]; c++) {
    char text[512];
    snprintf(text, sizeof text,
             "void h(double a[64][64], double b[64][64]) {\n#pragma acc parallel loop\n  %s\n}\n",
             kept[c]);
    n = analyze_one(text, NULL, 0, &prog);
    if (n) {
      CHECK(!n->loops[1].band && !n->loops[1].imperfect);
      if (n->loops[1].band) fprintf(stderr, "case %zu joined the band\n", c);
    }
    sp_program_free(&prog);
  }
  /* a step of 2 with statements before the loop only: joined, first iteration */
  n = analyze_one("void h(double a[64][64], double b[64][64]) {\n#pragma acc parallel loop\n"
                  "  for (int i = 0; i < 64; i++) { b[i][0] = 1;\n#pragma acc loop\n"
                  " for (int j = 1; j < 64; j += 2) a[i][j] = 0; }\n}\n",
                  NULL, 0, &prog);
  if (n) {
    CHECK(n->loops[1].imperfect);
    const sp_ref *b = ref_named(n, "b[i][0]", SP_WRITE);
    CHECK(b && b->nguards == 1 && b->guards[0].expr.constant == -1);
  }
  sp_program_free(&prog);
}

/* A stepped loop's last index is the last one it takes: i < 4096 step 2 ends at 4094, so
 * a[i + 1] stays inside a[4096] (no warning). A break inside a switch leaves the switch. */
static void test_steps_and_switch(void) {
  char *said = NULL;
  size_t len = 0;
  sp_program prog;
  diag_capture = open_memstream(&said, &len);
  CHECK_EQ_INT(analyze("double a[4096], b[4096];\nvoid f(void) {\n#pragma acc parallel loop\n"
                       "  for (int i = 0; i < 4096; i += 2) { b[i] = a[i]; b[i + 1] = a[i + 1]; }\n"
                       "#pragma acc parallel loop\n"
                       "  for (int i = 4095; i > 0; i -= 2) { b[i] = a[i]; b[i - 1] = a[i - 1]; }\n"
                       "}\n",
                       NULL, 0, NULL, 0, false, &prog),
               SP_EXIT_OK);
  fclose(diag_capture);
  diag_capture = NULL;
  CHECK_EQ_INT(prog.nnests, 2);
  CHECK(!strstr(said, "reaches bytes"));
  if (strstr(said, "reaches bytes")) fprintf(stderr, "said: %s\n", said);
  for (int k = 0; k < prog.nnests; k++) CHECK_EQ_INT(prog.nests[k].arrays[0].total_bytes, 32768);
  free(said);
  sp_program_free(&prog);
  /* the break in the for loop (not in a switch) still skips the nest */
  CHECK_EQ_INT(analyze("void f(double a[64][64], const int *restrict kind) {\n"
                       "#pragma acc parallel loop\n"
                       "  for (int i = 0; i < 64; i++) {\n"
                       "    switch (kind[i]) { case 0: a[i][0] = 1; break; default: a[i][1] = 2; }\n"
                       "    for (int j = 0; j < 64; j++) { if (j > 3) break; a[i][j] = 0; }\n"
                       "  }\n}\n",
                       NULL, 0, NULL, 0, false, &prog),
               SP_EXIT_NO_NESTS);
  sp_program_free(&prog);
  sp_nest *n = analyze_one("void f(double a[64][64], const int *restrict kind) {\n"
                  "#pragma acc parallel loop\n"
                  "  for (int i = 0; i < 64; i++)\n"
                  "    switch (kind[i]) { case 0: a[i][0] = 1; break; default:\n"
                  "      for (int j = 0; j < 64; j++) a[i][j] = 0; break; }\n}\n",
                  NULL, 0, &prog);
  CHECK(n && n->nloops == 2);
  sp_program_free(&prog);
  /* collapse(3) over two loops: a warning (GCC rejects it), the two collapsed */
  said = NULL;
  diag_capture = open_memstream(&said, &len);
  CHECK_EQ_INT(analyze("void f(double a[64][64]) {\n#pragma acc parallel loop collapse(3)\n"
                       "  for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) a[i][j] = 0;\n}\n",
                       NULL, 0, NULL, 0, false, &prog),
               SP_EXIT_OK);
  fclose(diag_capture);
  diag_capture = NULL;
  CHECK(strstr(said, "warning: collapse(3) on loop 'i' covers 3 loops, but only 2 are tightly "
                     "nested here") != NULL);
  CHECK(prog.nnests == 1 && prog.nests[0].loops[1].collapsed_into == 0);
  free(said);
  sp_program_free(&prog);
}


/* An index helper whose body is `return EXPR;` is inlined with its arguments' values (nested calls
 * too); a helper with more in it stays a call the model cannot read (an irregular access). */
static void test_index_helpers(void) {
  const char *src =
      "static inline int idx(int i, int j) { return i * 64 + j; }\n"
      "static int twice(int i) { return 2 * i; }\n"
      "static int wrap(int j) { if (j == 0) return 63; return j - 1; }\n"
      "void f(double *restrict a, const double *restrict b, double *restrict c) {\n"
      "#pragma acc parallel loop collapse(2)\n"
      "  for (int i = 0; i < 64; i++)\n"
      "    for (int j = 0; j < 32; j++) {\n"
      "      a[idx(i, twice(j))] = b[idx(j, i)];\n"
      "      c[idx(i, wrap(j))] = 1;\n"
      "    }\n"
      "}\n";
  sp_program prog;
  sp_nest *n = analyze_one(src, NULL, 0, &prog);
  if (n) {
    const sp_ref *a = ref_named(n, "a[idx(i, twice(j))]", SP_WRITE);
    const sp_ref *b = ref_named(n, "b[idx(j, i)]", SP_READ);
    const sp_ref *c = ref_named(n, "c[idx(i, wrap(j))]", SP_WRITE);
    CHECK(a && !a->irregular && a->offset.coef[0] == 512 && a->offset.coef[1] == 16);
    CHECK(b && !b->irregular && b->offset.coef[0] == 8 && b->offset.coef[1] == 512);
    CHECK(c && c->irregular);
  }
  sp_program_free(&prog);
}


/* A local pointer to VLA rows initialized with a cast: its rows are m elements (the initializer
 * is not taken for a size expression). */
static void test_local_vla_pointer(void) {
  const char *src =
      "void f(int m, double *restrict ap, const double *restrict bp) {\n"
      "  double (*restrict a)[m] = (double (*)[m])ap;\n"
      "  const double (*restrict b)[m] = (const double (*)[m])bp;\n"
      "#pragma acc parallel loop\n"
      "  for (int i = 0; i < m; i++)\n"
      "    for (int j = 0; j < m; j++)\n"
      "      a[i][j] = 2.0 * b[j][i];\n"
      "}\n";
  sp_param p[] = {{"m", 3000}};
  sp_program prog;
  sp_nest *n = analyze_one(src, p, 1, &prog);
  if (n) {
    const sp_ref *a = ref_named(n, "a[i][j]", SP_WRITE), *b = ref_named(n, "b[j][i]", SP_READ);
    CHECK(a && !a->irregular && a->offset.coef[0] == 24000 && a->offset.coef[1] == 8);
    CHECK(b && !b->irregular && b->offset.coef[0] == 8 && b->offset.coef[1] == 24000);
  }
  sp_program_free(&prog);
}


/* A subscript chosen by a condition on the indices (a periodic boundary, directly or through a
 * local) is two accesses, each under its branch's guard, not an irregular one. */
static void test_periodic_subscripts(void) {
  const char *src =
      "void f(double a[64][64], double b[64][64]) {\n"
      "#pragma acc parallel loop collapse(2)\n"
      "  for (int i = 0; i < 64; i++)\n"
      "    for (int j = 0; j < 64; j++) {\n"
      "      int jm = j == 0 ? 63 : j - 1;\n"
      "      b[i][j] = a[i][jm] + a[i == 63 ? 0 : i + 1][j];\n"
      "    }\n"
      "}\n";
  sp_program prog;
  sp_nest *n = analyze_one(src, NULL, 0, &prog);
  if (n) {
    int jm = 0, ip = 0;
    for (int r = 0; r < n->nrefs; r++) {
      const sp_ref *ref = &n->refs[r];
      CHECK(!ref->irregular);
      if (strcmp(ref->text, "a[i][jm]") == 0) {
        jm++;
        CHECK_EQ_INT(ref->nguards, 1);
        /* j == 0: a[i][63]; else a[i][j - 1] */
        bool edge = ref->offset.coef[1] == 0;
        CHECK(edge ? ref->offset.constant == 63 * 8 : ref->offset.constant == -8);
        CHECK(fabs(ref->guard_excluded - (edge ? 63.0 / 64 : 1.0 / 64)) < 1e-9);
      }
      if (strncmp(ref->text, "a[i == 63", 9) == 0) {
        ip++;
        bool edge = ref->offset.coef[0] == 0;
        CHECK(edge ? ref->offset.constant == 8 * 0 : ref->offset.constant == 64 * 8);
      }
    }
    CHECK_EQ_INT(jm, 2);
    CHECK_EQ_INT(ip, 2);
  }
  sp_program_free(&prog);
}

/* Which compute constructs hold their nest's outer loop alone (sp_nest.construct_sole_loop: GCC
 * 12's parloops takes a kernels region only then): the directive on the loop, a block holding
 * the loop alone (an empty statement aside), a combined `kernels loop`; not a block of two
 * nests, nor one with a statement beside its loop. */
static void test_construct_sole_loop(void) {
  const char *src =
      "#define N 64\n"
      "double a[N][N], b[N][N];\n"
      "void f(double s) {\n"
      "#pragma acc kernels\n"
      "  for (int i = 0; i < N; i++)\n"
      "    for (int j = 0; j < N; j++) a[i][j] = b[i][j];\n"
      "#pragma acc kernels\n"
      "  {\n"
      "    for (int i = 0; i < N; i++)\n"
      "      for (int j = 0; j < N; j++) a[i][j] = b[i][j];\n"
      "    ;\n"
      "  }\n"
      "#pragma acc kernels loop\n"
      "  for (int i = 0; i < N; i++) a[i][0] = s;\n"
      "#pragma acc kernels\n"
      "  {\n"
      "    for (int i = 0; i < N; i++) a[i][0] = s;\n"
      "    for (int i = 0; i < N; i++) b[i][0] = s;\n"
      "  }\n"
      "#pragma acc kernels\n"
      "  {\n"
      "    b[0][0] = s;\n"
      "    for (int i = 0; i < N; i++) a[i][0] = s;\n"
      "  }\n"
      "}\n";
  sp_program prog;
  CHECK_EQ_INT(analyze(src, NULL, 0, NULL, 0, false, &prog), SP_EXIT_OK);
  CHECK_EQ_INT(prog.nnests, 6);
  const bool want[6] = {true, true, true, false, false, false};
  for (int i = 0; i < prog.nnests && i < 6; i++) {
    CHECK(prog.nests[i].construct == SP_CONSTRUCT_ACC_KERNELS);
    if (prog.nests[i].construct_sole_loop != want[i])
      fprintf(stderr, "nest %d at line %u: construct_sole_loop %d\n", i, prog.nests[i].loc.line,
              prog.nests[i].construct_sole_loop);
    CHECK(prog.nests[i].construct_sole_loop == want[i]);
  }
  sp_program_free(&prog);
}

int main(void) {
  SP_RUN(test_linearized_and_column_major);
  SP_RUN(test_struct_pointer_vla);
  SP_RUN(test_loop_forms);
  SP_RUN(test_triangular_and_huge);
  SP_RUN(test_zero_trip_loops);
  SP_RUN(test_irregular_and_scalars);
  SP_RUN(test_irregular_affine_rest);
  SP_RUN(test_row_pointers);
  SP_RUN(test_irregular_loops);
  SP_RUN(test_macro_subscripts);
  SP_RUN(test_guards);
  SP_RUN(test_guard_shares_brute_force);
  SP_RUN(test_guard_share_sampled);
  SP_RUN(test_dependences);
  SP_RUN(test_parity_guards);
  SP_RUN(test_unknown_condition_note);
  SP_RUN(test_fp_work);
  SP_RUN(test_parity_dependences_brute_force);
  SP_RUN(test_all_loops_omp_host_loop);
  SP_RUN(test_errors);
  SP_RUN(test_repeated_and_hoisted_loads);
  SP_RUN(test_carried_loads);
  SP_RUN(test_continue_guards);
  SP_RUN(test_local_pointers);
  SP_RUN(test_pointer_not_an_integer);
  SP_RUN(test_imperfect_nests);
  SP_RUN(test_steps_and_switch);
  SP_RUN(test_index_helpers);
  SP_RUN(test_local_vla_pointer);
  SP_RUN(test_periodic_subscripts);
  SP_RUN(test_construct_sole_loop);
  return SP_TEST_END();
}
