/* Recorded block placements: the CSV reader (order, every error named by file:line), the trace
 * under a placement (an SM runs its list, in order), and hand-computed L1 hits that differ
 * between b mod S and a placement that puts blocks sharing data on different SMs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/placement.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch H100;

static FILE *text_file(const char *text)
{
  FILE *f = tmpfile();
  fputs(text, f);
  rewind(f);
  return f;
}

static int read_text(const char *text, int nsm, int64_t nblocks, sp_block_placement *p, char *err,
                     size_t errlen)
{
  FILE *f = text_file(text);
  int rc = sp_place_read_csv(f, "p.csv", nsm, nblocks, p, err, errlen);
  fclose(f);
  return rc;
}

static void test_read_csv(void)
{
  sp_block_placement p;
  char err[256];
  /* SM 1 started 3 before 0 (by time), SM 0 ran 1 then 2 (equal start: lower block first) */
  CHECK_EQ_INT(read_text("block,smid,start_ns,end_ns\n0,1,50,90\n1,0,10,20\n2,0,10,30\n3,1,5,"
                         "0\n",
                         2, 4, &p, err, sizeof err),
               0);
  CHECK_EQ_INT(p.nsm, 2);
  CHECK_EQ_INT(p.first[0], 0);
  CHECK_EQ_INT(p.first[1], 2);
  CHECK_EQ_INT(p.first[2], 4);
  CHECK_EQ_INT(p.block[0], 1);
  CHECK_EQ_INT(p.block[1], 2);
  CHECK_EQ_INT(p.block[2], 3);
  CHECK_EQ_INT(p.block[3], 0);
  sp_trace_placement_free(&p);

  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"blk,sm\n0,0,0,0\n", "p.csv:1: expected the header"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n1,0,x,0\n", "p.csv:3: expected four integers"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n1,0,0,0,5\n", "p.csv:3: expected four integers"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n0,1,0,0\n", "p.csv:3: block 0 appears twice"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n1,2,0,0\n", "p.csv:3: block 1 on SM 2 is outside"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n2,0,0,0\n", "p.csv:3: block 2 on SM 0 is outside"},
      {"block,smid,start_ns,end_ns\n0,0,0,0\n", "p.csv: 1 of the grid's 2 blocks are listed"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = 0;
    CHECK_EQ_INT(read_text(bad[i].text, 2, 2, &p, err, sizeof err), -1);
    if (strncmp(err, bad[i].msg, strlen(bad[i].msg)) != 0)
      fprintf(stderr, "case %zu: got '%s', want '%s...'\n", i, err, bad[i].msg);
    CHECK(strncmp(err, bad[i].msg, strlen(bad[i].msg)) == 0);
    CHECK(p.first == NULL && p.block == NULL);
  }
}

/* i2 (0..3) on blockIdx.y, p (0..1) on blockIdx.x, j (0..31) on threadIdx.x; one load A[p][j]
 * (doubles): block b = p + 2 i2 reads row p = b mod 2, 8 sectors. */
static void parity_nest(tnest *t, sp_schedule *s)
{
  tn_init(t);
  tn_loop(t, -1, true, true, 0, 0, 3, 0, 1);
  tn_loop(t, 0, true, true, 0, 0, 1, 0, 1);
  tn_loop(t, 1, true, true, 0, 0, 31, 0, 1);
  int a = tn_array(t, 8, 2 * 32 * 8);
  int chain[3] = {0, 1, 2};
  int64_t c[SP_MAX_LOOPS] = {0, 256, 8};
  tn_ref(t, a, false, 8, chain, 3, 0, c);
  memset(s, 0, sizeof *s);
  s->nband = 3;
  for (int k = 0; k < SP_MAX_LOOPS; k++) s->map[k].thread_dim = s->map[k].block_dim = -1;
  s->map[0].block_dim = 1;
  s->map[1].block_dim = 0;
  s->map[2].thread_dim = 0;
  s->block[0] = 32, s->block[1] = s->block[2] = 1;
  s->grid[0] = 2, s->grid[1] = 4, s->grid[2] = 1;
}

typedef struct order_ctx {
  int64_t seen[16];
  int n, sm_bad;
} order_ctx;

static int order_sink(void *vctx, const sp_warp_instr *wi)
{
  order_ctx *c = vctx;
  if (wi->sm != 0) c->sm_bad++;
  if (c->n < 16) c->seen[c->n] = wi->block;
  c->n++;
  return 0;
}

static void test_trace_and_hits(void)
{
  sp_arch two = H100;
  two.sm_count = 2;
  tnest t;
  sp_schedule s;
  parity_nest(&t, &s);
  static const int64_t first[] = {0, 4, 8};
  static const int64_t block[] = {5, 0, 4, 1, 2, 3, 6, 7}; /* SM 0 runs 5, 0, 4, 1 */
  sp_block_placement P = {2, first, block};

  /* one block at a time on SM 1... of the sink: the sampled SM is SM 0 to it */
  sp_trace_options o = {.active_blocks_per_sm = 1, .sample_sms = 1, .placement = &P};
  order_ctx c = {0};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &two, &o, order_sink, &c, &st), 0);
  CHECK_EQ_INT(c.n, 4);
  CHECK_EQ_INT(c.sm_bad, 0);
  CHECK_EQ_INT(c.seen[0], 5);
  CHECK_EQ_INT(c.seen[1], 0);
  CHECK_EQ_INT(c.seen[2], 4);
  CHECK_EQ_INT(c.seen[3], 1);
  CHECK_EQ_INT(st.blocks_simulated, 4);
  /* SM 1 from its second block on */
  o.sample_sm_first = 1;
  o.sample_skip_blocks = 1;
  c = (order_ctx){0};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &two, &o, order_sink, &c, &st), 0);
  CHECK_EQ_INT(c.n, 3);
  CHECK_EQ_INT(c.seen[0], 3);
  CHECK_EQ_INT(c.seen[2], 7);
  /* a placement for another SM count is refused */
  sp_block_placement P3 = {3, first, block};
  o.placement = &P3;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &two, &o, order_sink, &c, &st), -1);

  /* L1: under b mod 2 each SM reads one row four times (3 of 4 hit); under P each reads both
   * rows twice (half hit) */
  sp_cm_counters rr, pl;
  int64_t nb;
  for (int sm = 0; sm < 2; sm++) {
    CHECK_EQ_INT(sp_place_simulate_sm(&t.n, &s, &two, NULL, NULL, sm, &rr, &nb), 0);
    CHECK_EQ_INT(nb, 4);
    CHECK_EQ_INT(rr.ld_sectors, 32);
    CHECK_EQ_INT(rr.ld_l1_hit_sectors, 24);
    CHECK_EQ_INT(rr.l2_read_sectors, 8);
    CHECK_EQ_INT(sp_place_simulate_sm(&t.n, &s, &two, NULL, &P, sm, &pl, &nb), 0);
    CHECK_EQ_INT(nb, 4);
    CHECK_EQ_INT(pl.ld_sectors, 32);
    CHECK_EQ_INT(pl.ld_l1_hit_sectors, 16);
    CHECK_EQ_INT(pl.l2_read_sectors, 16);
  }
  CHECK_EQ_INT(sp_place_simulate_sm(&t.n, &s, &two, NULL, NULL, 2, &rr, &nb), -1);
}

int main(void)
{
  char err[512];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_read_csv);
  SP_RUN(test_trace_and_hits);
  return SP_TEST_END();
}
