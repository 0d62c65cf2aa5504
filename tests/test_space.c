/* The schedule space: named patterns, the compiler default, user constraints, legality. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/arch.h"
#include "schedpredict/traces.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch H100;

static bool same(const sp_schedule *a, const sp_schedule *b) { return sp_schedule_equal(a, b); }

/* common checks: no duplicates, every candidate legal, names and text set, default marked */
static void check_space(const sp_nest *n, const sp_space *sp) {
  int dups = 0, bad = 0, ndef = 0;
  char err[256];
  for (int i = 0; i < sp->n; i++) {
    for (int j = i + 1; j < sp->n; j++) dups += same(&sp->items[i], &sp->items[j]);
    if (sp_schedule_check(n, &sp->items[i], &H100, err, sizeof err) != 0) {
      if (bad++ < 3) fprintf(stderr, "illegal candidate %d: %s\n", i, err);
    }
    CHECK(sp->items[i].name[0] != 0);
    CHECK(sp->items[i].openacc[0] != 0);
    ndef += sp->items[i].compiler_default;
  }
  CHECK_EQ_INT(dups, 0);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(ndef, 1);
  CHECK(sp->default_index >= 0 && sp->default_index < sp->n);
  if (sp->default_index >= 0) CHECK(sp->items[sp->default_index].compiler_default);
}

static int find_map(const sp_space *sp, const char *name, int cnt[1]) {
  int first = -1;
  cnt[0] = 0;
  for (int i = 0; i < sp->n; i++)
    if (strcmp(sp->items[i].name, name) == 0) {
      if (first < 0) first = i;
      cnt[0]++;
    }
  return first;
}

static void check_2d_patterns(const sp_space *sp) {
  int c;
  /* loop 0 = i (outer, y), loop 1 = j (inner, x) */
  int p = find_map(sp, "2_1", &c);
  CHECK(p >= 0 && c > 1);
  if (p >= 0) {
    const sp_schedule *s = &sp->items[p];
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
    CHECK_EQ_INT(s->map[1].block_dim, -1);
    CHECK_EQ_INT(s->map[0].thread_dim, -1);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK(s->openacc_expressible);
  }
  p = find_map(sp, "2_2", &c);
  CHECK(p >= 0 && c > 1);
  if (p >= 0) {
    const sp_schedule *s = &sp->items[p];
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
    CHECK_EQ_INT(s->map[1].block_dim, 0);
    CHECK_EQ_INT(s->map[0].thread_dim, -1);
    CHECK_EQ_INT(s->map[0].block_dim, 1);
    CHECK(!s->openacc_expressible);
    CHECK(strncmp(s->openacc, "not expressible", 15) == 0);
  }
  p = find_map(sp, "2_3", &c);
  CHECK(p >= 0 && c > 1);
  if (p >= 0) {
    const sp_schedule *s = &sp->items[p];
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
    CHECK_EQ_INT(s->map[1].block_dim, 0);
    CHECK_EQ_INT(s->map[0].thread_dim, 1);
    CHECK_EQ_INT(s->map[0].block_dim, 1);
  }
  /* interchange: threadIdx.x on the outer loop */
  int inter = 0;
  for (int i = 0; i < sp->n; i++) inter += sp->items[i].map[0].thread_dim == 0;
  CHECK(inter > 0);
}

static void test_transpose_space(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  fprintf(stderr, "  transpose 2-deep space: %d candidates\n", sp.n);
  CHECK(sp.n >= 100 && sp.n <= 1000);
  check_space(&t.n, &sp);
  check_2d_patterns(&sp);
  const sp_schedule *d = &sp.items[sp.default_index];
  CHECK_EQ_INT(d->map[1].thread_dim, 0); /* vector on the inner loop */
  CHECK_EQ_INT(d->map[1].block_dim, -1);
  CHECK_EQ_INT(d->map[0].block_dim, 0); /* gang on the outer */
  CHECK_EQ_INT(d->block[0], 128);
  CHECK_EQ_INT(d->block[1], 1);
  CHECK_EQ_INT(d->grid[0], 4096);
  CHECK(strstr(d->openacc, "j: vector(128)") != NULL);
  CHECK(strstr(d->openacc, "i: gang") != NULL);
  /* grids: covering and capped (multiples of the SM count) for one 2_3 shape */
  int cover = 0, capped = 0;
  for (int i = 0; i < sp.n; i++) {
    const sp_schedule *s = &sp.items[i];
    if (strcmp(s->name, "2_3") || s->block[0] != 32 || s->block[1] != 8) continue;
    if (s->grid[0] == 128 && s->grid[1] == 512) cover++;
    /* capped at 8 x SMs = 1056 blocks: x keeps its 128, y gets 1056 / 128 = 8 */
    if (s->grid[0] == 128 && s->grid[1] == 8) capped++;
  }
  CHECK_EQ_INT(cover, 1);
  CHECK_EQ_INT(capped, 1);
  /* deterministic */
  sp_space sp2;
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp2, err, sizeof err), 0);
  CHECK_EQ_INT(sp2.n, sp.n);
  if (sp2.n == sp.n) CHECK(memcmp(sp.items, sp2.items, (size_t)sp.n * sizeof *sp.items) == 0);
  sp_space_free(&sp2);
  sp_space_free(&sp);
}

/* matmul: i, j parallel (collapse(2) as the example writes it), k sequential in the body */
static void make_matmul(tnest *t, bool collapse) {
  const int64_t n = 4096;
  tn_init(t);
  tn_loop(t, -1, true, true, 0, 0, n - 1, 0, 1);
  tn_loop(t, 0, true, true, 0, 0, n - 1, 0, 1);
  tn_loop(t, 1, false, false, 0, 0, n - 1, 0, 1);
  if (collapse) {
    t->n.loops[0].clauses.collapse = 2;
    t->n.loops[1].collapsed_into = 0;
  }
  int a = tn_array(t, 8, n * n * 8), b = tn_array(t, 8, n * n * 8), c = tn_array(t, 8, n * n * 8);
  int ch3[3] = {0, 1, 2}, ch2[2] = {0, 1};
  int64_t ca[SP_MAX_LOOPS] = {n * 8, 0, 8}, cb[SP_MAX_LOOPS] = {0, 8, n * 8},
          cc[SP_MAX_LOOPS] = {n * 8, 8};
  tn_ref(t, a, false, 8, ch3, 3, 0, ca);
  tn_ref(t, b, false, 8, ch3, 3, 0, cb);
  tn_ref(t, c, true, 8, ch2, 2, 0, cc);
}

static void test_matmul_space(void) {
  for (int col = 0; col < 2; col++) {
    tnest t;
    make_matmul(&t, col);
    sp_space sp;
    char err[256];
    CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
    check_space(&t.n, &sp);
    check_2d_patterns(&sp);
    int ncol = 0;
    for (int i = 0; i < sp.n; i++) ncol += sp.items[i].collapse_count == 2;
    const sp_schedule *d = &sp.items[sp.default_index];
    CHECK_EQ_INT(d->block[0], 128);
    CHECK(strstr(d->openacc, "vector(128)") != NULL);
    if (col) {
      fprintf(stderr, "  matmul collapse(2) space: %d candidates (%d collapsed)\n", sp.n, ncol);
      CHECK(ncol > 0);
      /* the default honors the user's collapse: gang vector(128) on the fused loop */
      CHECK_EQ_INT(d->collapse_count, 2);
      CHECK_EQ_INT(d->map[0].thread_dim, 0);
      CHECK_EQ_INT(d->map[0].block_dim, 0);
      CHECK_EQ_INT(d->grid[0], 4096 * 4096 / 128);
      CHECK(strstr(d->openacc, "collapse(2) gang vector(128)") != NULL);
    } else {
      CHECK_EQ_INT(ncol, 0);
      CHECK_EQ_INT(d->map[1].thread_dim, 0);
      CHECK_EQ_INT(d->map[0].block_dim, 0);
    }
    sp_space_free(&sp);
  }
}

static void test_3d_space(void) {
  tnest t;
  tn_init(&t);
  tn_loop(&t, -1, true, true, 1, 0, 254, 0, 1);
  tn_loop(&t, 0, true, true, 1, 0, 254, 0, 1);
  tn_loop(&t, 1, true, true, 1, 0, 254, 0, 1);
  int a = tn_array(&t, 8, 256 * 256 * 256 * 8);
  int ch[3] = {0, 1, 2};
  int64_t c[SP_MAX_LOOPS] = {256 * 256 * 8, 256 * 8, 8};
  tn_ref(&t, a, false, 8, ch, 3, 0, c);
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  fprintf(stderr, "  3-deep space: %d candidates\n", sp.n);
  check_space(&t.n, &sp);
  static const struct {
    const char *name;
    int t[3], b[3]; /* loops 0 (z), 1 (y), 2 (x) */
  } pat[] = {
      {"3_1", {-1, 1, 0}, {0, -1, -1}}, {"3_2", {-1, -1, 0}, {2, 1, 0}},
      {"3_3", {-1, 1, 0}, {2, 1, 0}},   {"3_4", {2, 1, 0}, {2, 1, 0}},
      {"3_5", {-1, -1, 0}, {1, 0, -1}},
  };
  for (size_t p = 0; p < sizeof pat / sizeof pat[0]; p++) {
    int cnt;
    int i = find_map(&sp, pat[p].name, &cnt);
    CHECK(i >= 0);
    if (i < 0) continue;
    for (int k = 0; k < 3; k++) {
      CHECK_EQ_INT(sp.items[i].map[k].thread_dim, pat[p].t[k]);
      CHECK_EQ_INT(sp.items[i].map[k].block_dim, pat[p].b[k]);
    }
  }
  int i31;
  int idx = find_map(&sp, "3_1", &i31);
  if (idx >= 0) CHECK(sp.items[idx].openacc_expressible);
  /* 3 thread dims use 3-D blocks */
  int b3 = 0;
  for (int i = 0; i < sp.n; i++) b3 += sp.items[i].block[2] > 1;
  CHECK(b3 > 0);
  sp_space_free(&sp);
}

static void test_options(void) {
  tnest t;
  tn_transpose(&t, 1024);
  static const int blocks[][3] = {{256, 1, 1}, {32, 8, 1}, {2048, 1, 1}};
  static const int64_t caps[] = {2};
  sp_space_options o = {blocks, 3, caps, 1, false, false, false, 0};
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, &o, &sp, err, sizeof err), 0);
  check_space(&t.n, &sp);
  int badblk = 0, inter = 0, badgrid = 0;
  for (int i = 0; i < sp.n; i++) {
    const sp_schedule *s = &sp.items[i];
    if (i == sp.default_index) continue; /* the default keeps vector(128) */
    bool ok = (s->block[0] == 256 && s->block[1] == 1) || (s->block[0] == 32 && s->block[1] == 8);
    badblk += !ok;
    inter += s->map[1].thread_dim != 0;
    int64_t g = s->grid[0] * s->grid[1];
    /* covering, or capped at 2 x SMs */
    bool cover = true;
    for (int k = 0; k < 2; k++) {
      if (s->map[k].block_dim < 0) continue;
      int64_t trip = 1024, c = s->map[k].thread_dim >= 0 ? trip / s->block[s->map[k].thread_dim] : trip;
      cover &= s->grid[s->map[k].block_dim] == c;
    }
    badgrid += !(cover || g <= 2 * H100.sm_count);
  }
  CHECK_EQ_INT(badblk, 0);
  CHECK_EQ_INT(inter, 0);
  CHECK_EQ_INT(badgrid, 0);
  sp_space_free(&sp);
}

/* four parallel loops: the outer two are collapsed so that three units remain */
static void test_four_deep(void) {
  tnest t;
  tn_init(&t);
  for (int k = 0; k < 4; k++) tn_loop(&t, k - 1, true, true, 0, 0, 15, 0, 1);
  int a = tn_array(&t, 4, 16 * 16 * 16 * 16 * 4);
  int ch[4] = {0, 1, 2, 3};
  int64_t c[SP_MAX_LOOPS] = {16 * 16 * 16 * 4, 16 * 16 * 4, 16 * 4, 4};
  tn_ref(&t, a, false, 4, ch, 4, 0, c);
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  check_space(&t.n, &sp);
  int nc = 0;
  for (int i = 0; i < sp.n; i++)
    nc += sp.items[i].collapse_first == 0 && sp.items[i].collapse_count == 2;
  CHECK_EQ_INT(nc, sp.n);
  sp_space_free(&sp);
  /* a sequential loop and a triangular one: no collapse, the innermost 3 parallel loops */
  t.n.loops[1].parallel = false;
  t.n.loops[2].lower.coef[1] = 1;
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  check_space(&t.n, &sp);
  int seq_ok = 0;
  for (int i = 0; i < sp.n; i++)
    seq_ok += sp.items[i].map[1].thread_dim == -1 && sp.items[i].map[1].block_dim == -1 &&
              sp.items[i].collapse_count == 0;
  CHECK_EQ_INT(seq_ok, sp.n);
  sp_space_free(&sp);
}

static void test_check_rejects(void) {
  tnest t;
  tn_transpose(&t, 64);
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 2;
  for (int k = 0; k < SP_MAX_LOOPS; k++) s.map[k].thread_dim = s.map[k].block_dim = -1;
  s.map[1] = (sp_loop_map){0, 0};
  s.map[0] = (sp_loop_map){1, 1};
  s.block[0] = 32, s.block[1] = 8, s.block[2] = 1;
  s.grid[0] = 2, s.grid[1] = 8, s.grid[2] = 1;
  char err[256];
  CHECK_EQ_INT(sp_schedule_check(&t.n, &s, &H100, err, sizeof err), 0);
  sp_schedule b = s;
  b.map[0].thread_dim = 0; /* thread x twice */
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  b = s;
  b.block[0] = 64, b.block[1] = 32; /* 2048 threads */
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  b = s;
  b.grid[1] = 70000;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  b = s;
  b.block[2] = 2; /* no loop on thread z */
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  b = s;
  t.n.loops[0].parallel = false; /* sequential loop mapped */
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  t.n.loops[0].parallel = true;
  b.collapse_first = 0, b.collapse_count = 2; /* loop 1 collapsed but mapped itself */
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
}

/* --registers: hand-computed on the H100 (65,536 registers an SM, allocated 256 a warp, warps in
 * fours). 36 a thread: 1,152 a warp, 1,280 allocated, 51 warps, 48 in fours: one block of 1,024
 * threads (two without the limit), six of 256 (eight). 255: 8,160, 8,192 allocated, 8 warps: no
 * block of 1,024 fits, and the space drops those. */
static void test_registers(void) {
  tnest t;
  tn_transpose(&t, 1024);
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.block[0] = 1024, s.block[1] = s.block[2] = 1;
  CHECK_EQ_INT(sp_schedule_blocks_per_sm(&H100, &s), 2);
  s.registers = 36;
  CHECK_EQ_INT(sp_schedule_blocks_per_sm(&H100, &s), 1);
  s.block[0] = 256;
  CHECK_EQ_INT(sp_schedule_blocks_per_sm(&H100, &s), 6);
  s.registers = 32; /* 32 x 2,048 threads: exactly the SM's registers */
  CHECK_EQ_INT(sp_schedule_blocks_per_sm(&H100, &s), 8);

  static const int blocks[][3] = {{1024, 1, 1}, {256, 1, 1}};
  sp_space_options o = {blocks, 2, NULL, 0, false, false, false, 255};
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, &o, &sp, err, sizeof err), 0);
  int wide = 0, regs = 0;
  for (int i = 0; i < sp.n; i++) {
    wide += sp.items[i].block[0] * sp.items[i].block[1] * sp.items[i].block[2] == 1024;
    regs += sp.items[i].registers == 255;
    CHECK_EQ_INT(sp_schedule_check(&t.n, &sp.items[i], &H100, err, sizeof err), 0);
  }
  CHECK(sp.n > 0);
  CHECK_EQ_INT(wide, 0);
  CHECK_EQ_INT(regs, sp.n);
  s = sp.items[0];
  s.block[0] = 1024;
  s.block[1] = s.block[2] = 1;
  s.map[0] = (sp_loop_map){-1, 1};
  s.map[1] = (sp_loop_map){0, 0};
  s.grid[0] = 1, s.grid[1] = 1024, s.grid[2] = 1;
  s.collapse_count = 0;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &s, &H100, err, sizeof err), -1);
  CHECK(strstr(err, "255 registers") != NULL);
  s.registers = 0;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &s, &H100, err, sizeof err), 0);
  sp_space_free(&sp);
}


/* An imperfect inner loop (analyzer/imperfect.c) takes thread dimensions only, is never
 * collapsed with the loop around it, and also runs sequentially (the forms without it). */
static void test_imperfect_space(void) {
  tnest t;
  tn_transpose(&t, 4096);
  t.n.loops[1].imperfect = true;
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  check_space(&t.n, &sp);
  int mapped = 0, sequential = 0;
  for (int i = 0; i < sp.n; i++) {
    const sp_schedule *s = &sp.items[i];
    CHECK_EQ_INT(s->map[1].block_dim, -1);
    CHECK_EQ_INT(s->collapse_count, 0);
    mapped += s->map[1].thread_dim >= 0;
    sequential += s->map[1].thread_dim < 0;
  }
  CHECK(mapped > 0 && sequential > 0);
  /* the default: gang on i, vector(128) on j */
  const sp_schedule *d = &sp.items[sp.default_index];
  CHECK_EQ_INT(d->map[0].block_dim, 0);
  CHECK_EQ_INT(d->map[1].thread_dim, 0);
  CHECK_EQ_INT(d->grid[0], 4096);
  /* the check rejects a block dimension on it, and a collapse into the loop around it */
  sp_schedule b = *d;
  b.map[1].block_dim = 1, b.grid[1] = 2;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  b = *d;
  b.map[0] = (sp_loop_map){0, 0}, b.map[1] = (sp_loop_map){-1, -1};
  b.collapse_first = 0, b.collapse_count = 2;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), -1);
  t.n.loops[1].imperfect = false;
  CHECK_EQ_INT(sp_schedule_check(&t.n, &b, &H100, err, sizeof err), 0);
  sp_space_free(&sp);
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_transpose_space);
  SP_RUN(test_matmul_space);
  SP_RUN(test_3d_space);
  SP_RUN(test_options);
  SP_RUN(test_four_deep);
  SP_RUN(test_check_rejects);
  SP_RUN(test_registers);
  SP_RUN(test_imperfect_space);
  return SP_TEST_END();
}
