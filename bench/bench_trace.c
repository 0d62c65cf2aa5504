/* Trace generation speed: warp instructions per second for B[j][i] = A[i][j] on 4096x4096
 * doubles (2 references, 1,048,576 warp instructions per schedule) and the same nest with 5
 * references (2,621,440), under a few schedules, and for a 4096x4096 gemm with a k loop of 32
 * under its collapse(2) schedules (the per-lane path), on the H100 description, into a sink
 * that only reads the addresses.
 *
 * Build and run from the repository root (after cmake --build build):
 *   cc -O2 -Iinclude -I. bench/bench_trace.c build/libschedpredict_core.a \
 *      -L/usr/lib/llvm-14/lib -lclang -ljansson -lgsl -lgslcblas -lm -o build/bench_trace
 *   build/bench_trace */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "schedpredict/arch.h"
#include "schedpredict/traces.h"
#include "tests/sp_nestbuild.h"

static int sink(void *ctx, const sp_warp_instr *wi) {
  uint64_t *acc = ctx;
  *acc += wi->addr[0] ^ wi->addr[31] ^ wi->active; /* keep the work observable */
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct want_sched {
  const char *name;
  int bx, by;
  int capped;
} want_sched;

static int time_schedules(const tnest *t, const sp_arch *arch, const want_sched *want, size_t n) {
  char err[512];
  sp_space sp;
  if (sp_space_build(&t->n, arch, NULL, &sp, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  for (size_t w = 0; w < n; w++) {
    const sp_schedule *s = NULL;
    for (int i = 0; i < sp.n && !s; i++) {
      const sp_schedule *c = &sp.items[i];
      int64_t g = c->grid[0] * c->grid[1] * c->grid[2];
      bool capped = g >= arch->sm_count && g <= 8 * arch->sm_count;
      if (!strcmp(c->name, want[w].name) && c->block[0] == want[w].bx && c->block[1] == want[w].by &&
          capped == (bool)want[w].capped)
        s = c;
    }
    if (!s) continue;
    uint64_t acc = 0;
    sp_trace_stats st;
    double t0 = now();
    int rc = sp_trace_run(&t->n, s, arch, NULL, sink, &acc, &st);
    double dt = now() - t0;
    printf("%d refs  %-8s block %4dx%-2d grid %6lldx%-5lld  %9lld warp instr  %.3f s  %6.1f M/s%s\n",
           t->n.nrefs, s->name, s->block[0], s->block[1], (long long)s->grid[0],
           (long long)s->grid[1], (long long)st.warp_instructions, dt,
           (double)st.warp_instructions / dt / 1e6, rc ? "  (error)" : "");
  }
  sp_space_free(&sp);
  return 0;
}

int main(void) {
  sp_arch arch;
  char err[512];
  if (sp_arch_load("h100", &arch, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  for (int five = 0; five < 2; five++) {
    tnest t;
    tn_transpose(&t, 4096);
    if (five) { /* three more: A[i][j+1], B[j][i] again, A[i][j] again */
      int chain[2] = {0, 1};
      int64_t ca[SP_MAX_LOOPS] = {4096 * 8, 8}, cb[SP_MAX_LOOPS] = {8, 4096 * 8};
      tn_ref(&t, 0, false, 8, chain, 2, 8, ca);
      tn_ref(&t, 1, false, 8, chain, 2, 0, cb);
      tn_ref(&t, 0, false, 8, chain, 2, 0, ca);
    }
    const want_sched want[] = {
        {"2_1", 128, 1, 0}, {"2_2", 256, 1, 0}, {"2_3", 32, 8, 0}, {"2_3", 32, 8, 1}};
    if (time_schedules(&t, &arch, want, sizeof want / sizeof want[0])) return 1;
  }
  tnest g;
  tn_gemm_rect(&g, 4096, 4096, 32, false);
  g.n.loops[0].clauses.collapse = 2; /* as written collapse(2): the space then has its groups */
  const want_sched want[] = {{"c2:tx+bx", 128, 1, 0}, {"c2:tx+bx", 256, 1, 0}, {"c2:tx+bx", 256, 1, 1}};
  if (time_schedules(&g, &arch, want, sizeof want / sizeof want[0])) return 1;
  return 0;
}
