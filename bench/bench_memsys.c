/* Throughput of the whole memory system (cachemodel/memsys.c) on one core: sector lookups per
 * second (L1 sector lookups of loads and stores + L2 sector lookups, sp_cm_memsys_lookups) and
 * warp instructions per second, on synthetic kernels over n x n doubles with block 32x8 on the
 * H100 description (132 SMs, blocks dealt round-robin, SMs in lockstep):
 *   coalesced: B[y][x] = A[y][x]       (8 sectors per request, every sector a miss everywhere)
 *   strided:   B[y][x] = A[x][y]       (32 sectors per load request, 75% L1 hits)
 *   strided-w: B[x][y] = A[y][x]       (32 sectors per store request, scattered L2 writes)
 * each in Base / fully associative, Base / set-associative, Modeled / fully associative,
 * "sampled 4 SMs" (all blocks dealt to 4 SMs, L2 scaled to 4/132, as the ranking's screening
 * configures it: the per-SM L1s and the L2 then fit the host's caches), and "L2 1/16" (all SMs,
 * the L2 sampled by fill block at 1 in 16, as the ranking's refinement configures an H100).
 * "lookups" are the lookups the model did (sp_cm_memsys_lookups); "sectors" are the sector
 * lookups it answered for: load and store sectors at L1 plus every L2 read and write sector,
 * sampled or not. Without L2 sampling the two differ only by the L1's per-line tag lookups.
 * The instruction generator is timed alone (into a no-op sink) and subtracted.
 * "warm": the same stream again after sp_cm_memsys_reset, as the ranking reuses a worker's
 * model from one candidate to the next (its counts must equal the first pass's). The first
 * pass also maps the tables' pages, which a ranking does once per worker: 0-13 % of a row's
 * time on 2026-11-27, within the VM's noise elsewhere.
 *
 * Build (library built by CMake in build/):
 *   cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude bench/bench_memsys.c build/libschedpredict_core.a \
 *      -ljansson -lgsl -lgslcblas -lclang-14 -L/usr/lib/llvm-14/lib -lm -o bench_memsys
 * or straight from the sources (no other dependency than libjansson for the arch loader):
 *   cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -I. -DSP_SOURCE_DIR=\"$PWD\" bench/bench_memsys.c \
 *      cachemodel/coalesce.c cachemodel/lru.c cachemodel/memsys.c cachemodel/cost.c \
 *      traces/arch.c -ljansson -lm -o bench_memsys
 * Run: ./bench_memsys [n, default 4096] [arch, default h100] [shaped|plain] [STREAM [MODEL]]
 * STREAM (coalesced, strided, strided-w) and MODEL (a row's model name, e.g. "L2 1/16") pick
 * one row's stream or model, for a profiler.
 * "shaped": instructions carry the shape ids the trace's affine path sets, so the coalescer
 * analyses each lane layout once (sp_cm_coalesce_shaped) instead of per instruction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedpredict/memsys.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int null_sink(void *ctx, const sp_warp_instr *wi)
{
  (*(int64_t *)ctx) += (int64_t)wi->addr[31] & 1;
  return 0;
}

typedef int (*sink_fn)(void *, const sp_warp_instr *);

/* Whether instructions carry a shape id (sp_warp_instr.shape) as the trace's affine path gives
 * them: one per lane layout (here per operand and stride), so the coalescer analyses each once. */
static int shaped;

/* kind 0 coalesced, 1 strided reads, 2 strided writes. Returns instructions. */
static int64_t gen(int n, int nsms, int kind, sink_fn sink, void *ctx)
{
  const uint64_t A = UINT64_C(1) << 30, B = A + (uint64_t)n * n * 8;
  const int64_t gx = n / 32, nblocks = gx * (n / 8);
  sp_warp_instr wi;
  memset(&wi, 0, sizeof wi);
  wi.access_bytes = 8;
  wi.active = UINT32_MAX;
  int64_t count = 0;
  for (int64_t b0 = 0; b0 < nblocks; b0 += nsms) {
    for (int w = 0; w < 8; w++) {
      for (int op = 0; op < 2; op++) {
        for (int sm = 0; sm < nsms && b0 + sm < nblocks; sm++) {
          int64_t b = b0 + sm, bx = b % gx, by = b / gx;
          uint64_t x0 = (uint64_t)bx * 32, y = (uint64_t)by * 8 + (uint64_t)w;
          uint64_t arr = op ? B : A, base, stride;
          int strided = (kind == 1 && op == 0) || (kind == 2 && op == 1);
          if (!strided) {
            base = arr + (y * (uint64_t)n + x0) * 8;
            stride = 8;
          } else {
            base = arr + (x0 * (uint64_t)n + y) * 8;
            stride = (uint64_t)n * 8;
          }
          wi.sm = sm;
          wi.block = b;
          wi.warp = w;
          wi.array = op;
          wi.ref = op;
          wi.write = op;
          wi.shape = shaped ? (uint64_t)(1 + 2 * op + strided) : 0;
          for (int l = 0; l < 32; l++) wi.addr[l] = base + (uint64_t)l * stride;
          if (sink(ctx, &wi) != 0) return -1;
          count++;
        }
      }
    }
  }
  return count;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  const char *archname = argc > 2 ? argv[2] : "h100";
  shaped = argc > 3 && strcmp(argv[3], "shaped") == 0;
  const char *only_kind = argc > 4 ? argv[4] : NULL, *only_cfg = argc > 5 ? argv[5] : NULL;
  if (n < 32 || n % 32) {
    fprintf(stderr, "n must be a positive multiple of 32\n");
    return 2;
  }
  sp_arch arch;
  char err[512];
  if (sp_arch_load(archname, &arch, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  static const char *kinds[] = {"coalesced", "strided", "strided-w"};
  static const char *cfgs[] = {"base/fully", "base/set-assoc", "modeled/fully", "sampled 4 SMs",
                               "L2 1/16"};
  printf("%s, %d x %d doubles, block 32x8%s\n", arch.name, n, n,
         shaped ? ", instructions shaped (the coalescer's memo of lane layouts)" : "");
  printf("%-10s %-15s %10s %12s %9s %9s %12s %12s %10s %8s %9s %12s\n", "stream", "model", "instr",
         "lookups", "gen s", "model s", "lookups/s", "sectors/s", "instr/s", "mem MB", "warm s",
         "warm sect/s");
  for (int kind = 0; kind < 3; kind++) {
    if (only_kind && strcmp(only_kind, kinds[kind]) != 0) continue;
    for (int cfg = 0; cfg < 5; cfg++) {
      if (only_cfg && strcmp(only_cfg, cfgs[cfg]) != 0) continue;
      int nsms = cfg == 3 ? 4 : arch.sm_count;
      sp_cm_options opt = {0};
      opt.l1_variant = cfg == 2 ? SP_CM_L1_MODELED : SP_CM_L1_BASE;
      opt.assoc = cfg == 1 ? SP_CM_SET_ASSOCIATIVE : SP_CM_FULLY_ASSOCIATIVE;
      opt.l2_fraction = cfg == 3 ? (double)nsms / arch.sm_count : 1.0;
      opt.l2_sample_shift = cfg == 4 ? 4 : 0;
      int rows = n;
      int64_t junk = 0;
      double t0 = now_s();
      gen(rows, nsms, kind, null_sink, &junk);
      double tgen = now_s() - t0;
      sp_cm_memsys *m = sp_cm_memsys_create(&arch, nsms, 2, &opt);
      if (!m) {
        fprintf(stderr, "create failed\n");
        return 1;
      }
      t0 = now_s();
      int64_t ninstr = gen(rows, nsms, kind, sp_cm_memsys_access, m);
      double tall = now_s() - t0;
      double tmodel = tall - tgen > 1e-9 ? tall - tgen : 1e-9;
      int64_t lk = sp_cm_memsys_lookups(m);
      sp_cm_counters c;
      sp_cm_memsys_counters(m, -1, &c);
      double sectors = (double)(c.ld_sectors + c.st_sectors + c.l2_read_sectors + c.l2_write_sectors);
      /* the same stream again on the emptied model, as the ranking reuses a worker's model
       * for its next candidate: the tables' pages are mapped by then */
      sp_cm_memsys_reset(m);
      t0 = now_s();
      gen(rows, nsms, kind, sp_cm_memsys_access, m);
      double twarm = now_s() - t0 - tgen;
      if (twarm < 1e-9) twarm = 1e-9;
      sp_cm_counters cw;
      sp_cm_memsys_counters(m, -1, &cw);
      if (memcmp(&cw, &c, sizeof c) != 0) {
        fprintf(stderr, "the second pass counted differently from the first\n");
        return 1;
      }
      printf("%-10s %-15s %10lld %12lld %9.3f %9.3f %10.1f M %10.1f M %8.2f M %8.1f %9.3f %10.1f M   (L1 hit "
             "%.3f, L2 read %lld, DRAM %.1f MB%s)\n",
             kinds[kind], cfgs[cfg], (long long)ninstr, (long long)lk, tgen, tmodel,
             lk / tmodel / 1e6, sectors / tmodel / 1e6, ninstr / tmodel / 1e6, sp_cm_memsys_memory_bytes(m) / 1e6,
             twarm, sectors / twarm / 1e6, sp_cm_l1_hit_rate(&c), (long long)c.l2_read_sectors,
             c.dram_read_bytes / 1e6, junk == -1 ? "!" : "");
      fflush(stdout);
      sp_cm_memsys_free(m);
    }
  }
  return 0;
}
