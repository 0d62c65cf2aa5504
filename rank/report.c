/* Reports of a ranking: the human text table and JSON with the same content. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/rank.h"

static const char sp_dim_names[] = "xyz";

static double sp_pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

char *sp_report_prose(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *text = malloc((size_t)n + 1);
  /* at most n + 1 lines (only the first can be empty), each adding at most its indent and a
   * newline */
  char *out = malloc((size_t)n * 6 + 8), *o = out;
  if (!text || !out) {
    free(text);
    free(out);
    return NULL;
  }
  va_start(ap, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  const char *t = text, *indent = "  ";
  while (*t) {
    const size_t room = SP_REPORT_PROSE_COLUMNS - strlen(indent), left = strlen(t);
    size_t cut = left;
    if (left > room) {
      cut = room;
      while (cut > 0 && t[cut] != ' ') cut--;
      if (cut == 0) cut = strcspn(t, " ");
    }
    o += sprintf(o, "%s%.*s\n", indent, (int)cut, t);
    t += cut;
    while (*t == ' ') t++;
    indent = "    ";
  }
  *o = 0;
  free(text);
  return out;
}

/* writes and frees lines from sp_report_prose */
static void sp_put_lines(FILE *out, char *lines) {
  if (lines) fputs(lines, out);
  free(lines);
}

/* "j->tx+bx i->ty+by k:seq" */
void sp_report_cuda_mapping(const sp_nest *n, const sp_schedule *s, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    if (sp_schedule_collapsed_away(s, k)) continue;
    const sp_loop_map *m = &s->map[k];
    char what[32];
    if (m->thread_dim >= 0 && m->block_dim >= 0)
      snprintf(what, sizeof what, "t%c+b%c", sp_dim_names[m->thread_dim], sp_dim_names[m->block_dim]);
    else if (m->thread_dim >= 0)
      snprintf(what, sizeof what, "t%c", sp_dim_names[m->thread_dim]);
    else if (m->block_dim >= 0)
      snprintf(what, sizeof what, "b%c", sp_dim_names[m->block_dim]);
    else
      snprintf(what, sizeof what, "seq");
    char idx[64];
    if (s->collapse_count >= 2 && k == s->collapse_first)
      snprintf(idx, sizeof idx, "%s..%s", n->loops[k].index,
               n->loops[k + s->collapse_count - 1].index);
    else
      snprintf(idx, sizeof idx, "%s", n->loops[k].index);
    int w = snprintf(buf + used, used < len ? len - used : 0, "%s%s->%s", used ? " " : "", idx,
                     what);
    if (w > 0) used += (size_t)w;
  }
}

static void sp_why(const sp_nest *n, const sp_rank_result *r, char *buf, size_t len) {
  const sp_rank_candidate *b = &r->candidates[r->order[0]];
  const sp_rank_candidate *d = &r->candidates[r->default_index];
  if (r->order[0] == r->default_index) {
    snprintf(buf, len, "The compiler default is already the best predicted schedule (%s bound).",
             sp_rank_bound_name(b->time.bound));
    return;
  }
  size_t used = 0;
#define SP_SAY(...)                                                                     \
  do {                                                                                  \
    int w_ = snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__);            \
    if (w_ > 0) used += (size_t)w_;                                                     \
  } while (0)
  const double speedup = d->time.total_s / b->time.total_s;
  /* the default among the near-ties (within SP_RANK_PLATEAU of the fastest), where the plateau
   * rule put another block shape first, however the default's time compares with rank 1's */
  bool default_near = false;
  const int plateau = sp_rank_plateau_size(r);
  for (int i = 0; i < plateau; i++) default_near |= r->order[i] == r->default_index;
  if (speedup < 1.0 || default_near)
    SP_SAY("The top-ranked schedule is predicted at %.2fx the compiler default's speed, among near-ties "
           "ordered by block width: the default is as fast as the model can tell (%s bound vs %s bound)",
           speedup, sp_rank_bound_name(b->time.bound), sp_rank_bound_name(d->time.bound));
  else
    SP_SAY("The best schedule is predicted %.2fx faster than the compiler default (%s bound vs %s bound)",
           speedup, sp_rank_bound_name(b->time.bound), sp_rank_bound_name(d->time.bound));
  /* the array whose accesses coalesce best relative to the default */
  int best_a = -1;
  double best_gain = 1.25;
  for (int a = 0; a < n->narrays; a++) {
    const sp_cm_counters *x = &b->per_array[a], *y = &d->per_array[a];
    int64_t xr = x->ld_requests + x->st_requests, yr = y->ld_requests + y->st_requests;
    if (!xr || !yr) continue;
    double xs = (double)(x->ld_sectors + x->st_sectors) / (double)xr;
    double ys = (double)(y->ld_sectors + y->st_sectors) / (double)yr;
    if (ys / xs > best_gain) {
      best_gain = ys / xs;
      best_a = a;
    }
  }
  if (best_a >= 0) {
    const sp_cm_counters *x = &b->per_array[best_a], *y = &d->per_array[best_a];
    SP_SAY(": accesses to %s coalesce (%.1f vs %.1f sectors per request)", n->arrays[best_a].name,
           (double)(x->ld_sectors + x->st_sectors) / (double)(x->ld_requests + x->st_requests),
           (double)(y->ld_sectors + y->st_sectors) / (double)(y->ld_requests + y->st_requests));
  }
  double bh1 = sp_pct(b->total.ld_l1_hit_sectors, b->total.ld_sectors);
  double dh1 = sp_pct(d->total.ld_l1_hit_sectors, d->total.ld_sectors);
  double bdram = (double)b->total.dram_read_bytes, ddram = (double)d->total.dram_read_bytes;
  if (bh1 - dh1 >= 10)
    SP_SAY("%s L1 reuse %.0f%% vs %.0f%%", best_a >= 0 ? ";" : ":", bh1, dh1);
  else if (ddram > 1.2 * bdram && bdram > 0)
    SP_SAY("%s %.1fx less DRAM traffic", best_a >= 0 ? ";" : ":", ddram / bdram);
  if (b->time.sms_used > d->time.sms_used || b->time.active_warps_per_sm > 1.5 * d->time.active_warps_per_sm)
    SP_SAY("; it keeps %d warp%s per SM busy on %d SMs (default: %d on %d)",
           b->time.active_warps_per_sm, b->time.active_warps_per_sm == 1 ? "" : "s",
           b->time.sms_used, d->time.active_warps_per_sm, d->time.sms_used);
  /* a triangular nest's default: its blocks of unequal work all resident at once (time.c) */
  if (d->time.uneven_s > 0.1 * d->time.total_s && b->time.uneven_s < 0.5 * d->time.uneven_s)
    SP_SAY("; the default's blocks do unequal work and all run at once, and its busiest SM "
           "adds %.0f%%", 100 * d->time.uneven_s / (d->time.total_s - d->time.uneven_s));
  SP_SAY(".");
  /* less L1 reuse is a cost the pick pays, not a reason it wins */
  if (dh1 - bh1 >= 10)
    SP_SAY(" It gives up L1 reuse: %.0f%% of its load sectors hit, against the default's %.0f%%.",
           bh1, dh1);
#undef SP_SAY
}

/* A row of the table: its candidate, its rank (0: the compiler default shown below the top)
 * and its text cells. */
typedef struct sp_row {
  const sp_rank_candidate *c;
  int rank;
  char map[160], block[32], grid[48];
} sp_row;

/* The width of each text column: the table's old fixed width, or its widest cell among the
 * rows shown where that is wider (a pattern such as ty+bx|tx+by outgrows the 8 of "pattern"). */
typedef struct sp_row_widths {
  int pattern, map, block, grid;
} sp_row_widths;

static void sp_row_fill(const sp_nest *n, const sp_rank_candidate *c, int rank, sp_row *row) {
  row->c = c;
  row->rank = rank;
  sp_report_cuda_mapping(n, &c->schedule, row->map, sizeof row->map);
  snprintf(row->block, sizeof row->block, "%dx%dx%d", c->schedule.block[0], c->schedule.block[1],
           c->schedule.block[2]);
  snprintf(row->grid, sizeof row->grid, "%lldx%lldx%lld", (long long)c->schedule.grid[0],
           (long long)c->schedule.grid[1], (long long)c->schedule.grid[2]);
}

static int sp_max_int(int a, int b) {
  return a > b ? a : b;
}

static void sp_row_widen(const sp_row *row, sp_row_widths *w) {
  w->pattern = sp_max_int(w->pattern, (int)strlen(row->c->schedule.name));
  w->map = sp_max_int(w->map, (int)strlen(row->map));
  w->block = sp_max_int(w->block, (int)strlen(row->block));
  w->grid = sp_max_int(w->grid, (int)strlen(row->grid));
}

/* v in a column of `width` characters: with `decimals` while that fits, else fewer, else in
 * e notation (a one-thread baseline takes seconds, and the speedups over it are in the 10^4) */
static void sp_fit_number(char *buf, size_t n, double v, int width, int decimals) {
  for (int d = decimals; d >= 0; d--)
    if (snprintf(buf, n, "%*.*f", width, d, v) <= width) return;
  snprintf(buf, n, "%*.0e", width, v);
}

static void sp_print_row(FILE *out, const sp_rank_result *res, const sp_row *row,
                         double default_s, const sp_row_widths *w) {
  const sp_rank_candidate *c = row->c;
  char r[16], t[32], x[32];
  if (row->rank > 0) snprintf(r, sizeof r, "%d", row->rank);
  else snprintf(r, sizeof r, "dflt");
  sp_fit_number(t, sizeof t, c->time.total_s * 1e6, 9, 1);
  sp_fit_number(x, sizeof x, default_s / c->time.total_s, 6, 2);
  fprintf(out, "  %4s %-*s %-*s %-*s %-*s %10lld %11lld %5.1f %5.1f %9.1f %10.3g %s %sx%s\n",
          r, w->pattern, c->schedule.name, w->map, row->map, w->block, row->block, w->grid,
          row->grid, (long long)(c->total.ld_requests + c->total.st_requests),
          (long long)(c->total.ld_sectors + c->total.st_sectors),
          sp_pct(c->total.ld_l1_hit_sectors, c->total.ld_sectors),
          sp_pct(c->total.l2_read_hit_sectors, c->total.l2_read_sectors),
          ((double)c->total.dram_read_bytes + sp_rank_dram_write_bytes(&c->total)) / 1e6,
          c->cost_xu, t, x, sp_rank_screened_only(res, c) ? " ~~" : c->sampled ? " ~" : "");
}

void sp_report_text(FILE *out, const sp_report_nest *nests, int n, const sp_arch *arch, int top) {
  fprintf(out, "GPU model: %s (%d SMs, L1 %lld KiB/SM for global loads, L2 %lld MiB", arch->full_name,
          arch->sm_count, (long long)(arch->l1_bytes / 1024), (long long)(arch->l2_bytes >> 20));
  const int64_t kept = sp_arch_l2_model_bytes(arch);
  if (kept != arch->l2_bytes) fprintf(out, ", %.1f of them kept for reuse", (double)kept / (1 << 20));
  if (arch->l2_reuse_set_sectors > 0)
    fprintf(out, " in hashed sets of %lld sectors", (long long)arch->l2_reuse_set_sectors);
  /* the times of such an arch are the memory system's alone: say so where they are read */
  if (!sp_arch_models_fp(arch)) fputs("; floating-point work not modeled: the arch file has no fp_op figures", out);
  fputs(")\n\n", out);
  for (int i = 0; i < n; i++) {
    const sp_nest *nest = nests[i].nest;
    fprintf(out, "%s:%u:%u: nest in %s() [%s]\n", nest->loc.file, nest->loc.line, nest->loc.col,
            nest->function, sp_construct_name(nest->construct));
    fputs("  loops:", out);
    for (int k = 0; k < nest->nloops; k++) {
      const sp_loop *L = &nest->loops[k];
      if (L->trip_min == L->trip_max)
        fprintf(out, " %s(%lld%s)", L->index, (long long)L->trip_max, L->parallel ? "" : ", seq");
      else
        fprintf(out, " %s(%lld..%lld%s)", L->index, (long long)L->trip_min,
                (long long)L->trip_max, L->parallel ? "" : ", seq");
    }
    fputs("\n  arrays:", out);
    for (int a = 0; a < nest->narrays; a++)
      fprintf(out, " %s (%.1f MB)", nest->arrays[a].name, (double)nest->arrays[a].total_bytes / 1e6);
    fputc('\n', out);
    const sp_rank_result *r = nests[i].rank;
    if (!r) {
      fprintf(out, "  not ranked: %s\n\n", nests[i].error ? nests[i].error : "?");
      continue;
    }
    int sampled = 0, screened = 0;
    for (int c = 0; c < r->n; c++) {
      sampled += r->candidates[c].sampled;
      screened += sp_rank_screened_only(r, &r->candidates[c]);
    }
    if (sampled)
      sp_put_lines(out, sp_report_prose("%d candidates evaluated (%d estimated from samples, "
                                        "marked ~; --exact to simulate all)",
                                        r->n, sampled));
    else
      sp_put_lines(out, sp_report_prose("%d candidates evaluated", r->n));
    if (screened)
      sp_put_lines(out, sp_report_prose("%d only screened on a short sample, marked ~~: rough "
                                        "figures that only chose what to simulate longer",
                                        screened));
    int plateau = sp_rank_plateau_size(r);
    if (plateau > 1)
      sp_put_lines(out, sp_report_prose("ranks 1-%d are predicted within %.0f %% of the fastest, "
                                        "closer than the model can tell apart: blocks of at most "
                                        "%d threads come first there, the widest block x first, "
                                        "and of the same threads a grid along the thread-x loop "
                                        "before one across it",
                                        plateau, 100 * (SP_RANK_PLATEAU - 1),
                                        SP_RANK_PLATEAU_THREADS));
    const int regs = sp_rank_registers(r);
    if (regs > 0)
      sp_put_lines(out, sp_report_prose("blocks an SM holds at once are limited by %d registers a "
                                        "thread (--registers)",
                                        regs));
    fputc('\n', out);
    /* the top rows, then the compiler default unless it is among them */
    const int ntop = r->n < top ? r->n : top;
    sp_row *rows = malloc(((size_t)ntop + 1) * sizeof *rows);
    if (!rows) {
      fputs("  (out of memory for the table)\n", out);
      continue;
    }
    int nrows = 0;
    bool default_shown = false;
    for (int k = 0; k < ntop; k++) {
      sp_row_fill(nest, &r->candidates[r->order[k]], k + 1, &rows[nrows++]);
      default_shown |= r->order[k] == r->default_index;
    }
    if (!default_shown) sp_row_fill(nest, &r->candidates[r->default_index], 0, &rows[nrows++]);
    sp_row_widths w = {8, 26, 11, 17};
    for (int k = 0; k < nrows; k++) sp_row_widen(&rows[k], &w);
    fprintf(out, "  %4s %-*s %-*s %-*s %-*s %10s %11s %5s %5s %9s %10s %9s %7s\n", "rank",
            w.pattern, "pattern", w.map, "CUDA mapping", w.block, "block", w.grid, "grid",
            "requests", "sectors", "L1%", "L2%", "DRAM MB", "cost(Xu)", "time us", "speedup");
    double dflt = r->candidates[r->default_index].time.total_s;
    for (int k = 0; k < nrows; k++) sp_print_row(out, r, &rows[k], dflt, &w);
    free(rows);
    if (nests[i].advice_text) fprintf(out, "\n%s", nests[i].advice_text);
    char why[768];
    sp_why(nest, r, why, sizeof why);
    fputc('\n', out);
    sp_put_lines(out, sp_report_prose("%s", why));
    fputc('\n', out);
  }
}

static json_t *sp_counters_json(const sp_cm_counters *c) {
  json_t *o = json_object();
  json_object_set_new(o, "global_load_requests", json_integer(c->ld_requests));
  json_object_set_new(o, "gld_transactions", json_integer(c->ld_sectors));
  json_object_set_new(o, "ld_l1_hit_sectors", json_integer(c->ld_l1_hit_sectors));
  json_object_set_new(o, "global_hit_rate", json_real(sp_pct(c->ld_l1_hit_sectors, c->ld_sectors)));
  json_object_set_new(o, "st_requests", json_integer(c->st_requests));
  json_object_set_new(o, "st_sectors", json_integer(c->st_sectors));
  json_object_set_new(o, "l2_tex_read_transactions", json_integer(c->l2_read_sectors));
  json_object_set_new(o, "l2_read_hit_sectors", json_integer(c->l2_read_hit_sectors));
  json_object_set_new(o, "l2_tex_read_hit_rate",
                      json_real(sp_pct(c->l2_read_hit_sectors, c->l2_read_sectors)));
  json_object_set_new(o, "l2_write_sectors", json_integer(c->l2_write_sectors));
  json_object_set_new(o, "dram_read_bytes", json_integer(c->dram_read_bytes));
  json_object_set_new(o, "dram_write_bytes", json_integer(llround(sp_rank_dram_write_bytes(c))));
  json_object_set_new(o, "st_partial_sectors", json_integer(c->st_partial_sectors));
  return o;
}

void sp_report_launch_json(json_t *o, const sp_schedule *s) {
  json_t *blk = json_array(), *grd = json_array();
  for (int d = 0; d < 3; d++) {
    json_array_append_new(blk, json_integer(s->block[d]));
    json_array_append_new(grd, json_integer(s->grid[d]));
  }
  json_object_set_new(o, "block", blk);
  json_object_set_new(o, "grid", grd);
}

json_t *sp_report_counters_json(const sp_cm_counters *c) { return sp_counters_json(c); }

static json_t *sp_candidate_json(const sp_nest *n, const sp_rank_result *r,
                                  const sp_rank_candidate *c, double dflt) {
  json_t *o = json_object();
  char map[160];
  sp_report_cuda_mapping(n, &c->schedule, map, sizeof map);
  json_object_set_new(o, "pattern", json_string(c->schedule.name));
  json_object_set_new(o, "cuda_mapping", json_string(map));
  json_object_set_new(o, "openacc", json_string(c->schedule.openacc));
  json_object_set_new(o, "compiler_default", json_boolean(c->schedule.compiler_default));
  sp_report_launch_json(o, &c->schedule);
  json_object_set_new(o, "counters", sp_counters_json(&c->total));
  json_t *per = json_object();
  for (int a = 0; a < n->narrays; a++)
    json_object_set_new(per, n->arrays[a].name, sp_counters_json(&c->per_array[a]));
  json_object_set_new(o, "per_array", per);
  json_object_set_new(o, "sampled", json_boolean(c->sampled));
  json_object_set_new(o, "screened_only", json_boolean(sp_rank_screened_only(r, c)));
  json_object_set_new(o, "extrapolation_factor", json_real(c->scale));
  json_object_set_new(o, "cost_xu", json_real(c->cost_xu));
  json_t *t = json_object();
  json_object_set_new(t, "total_us", json_real(c->time.total_s * 1e6));
  json_object_set_new(t, "dram_us", json_real(c->time.dram_s * 1e6));
  json_object_set_new(t, "l2_us", json_real(c->time.l2_s * 1e6));
  json_object_set_new(t, "l1_us", json_real(c->time.l1_s * 1e6));
  json_object_set_new(t, "latency_us", json_real(c->time.latency_s * 1e6));
  json_object_set_new(t, "combine_us", json_real(c->time.combine_s * 1e6));
  json_object_set_new(t, "empty_blocks_us", json_real(c->time.empty_s * 1e6));
  json_object_set_new(t, "uneven_blocks_us", json_real(c->time.uneven_s * 1e6));
  json_object_set_new(t, "dram_drift", json_real(c->time.dram_drift));
  json_object_set_new(t, "partial_writes_us", json_real(c->time.partial_s * 1e6));
  json_object_set_new(t, "fp_issue_us", json_real(c->time.arith_s * 1e6));
  json_object_set_new(t, "fp_chain_us", json_real(c->time.arith_chain_s * 1e6));
  json_object_set_new(t, "bound", json_string(sp_rank_bound_name(c->time.bound)));
  json_object_set_new(t, "sms_used", json_integer(c->time.sms_used));
  json_object_set_new(t, "active_warps_per_sm", json_integer(c->time.active_warps_per_sm));
  json_object_set_new(o, "time", t);
  json_object_set_new(o, "speedup_over_default", json_real(dflt / c->time.total_s));
  json_object_set_new(o, "blocks", json_integer(c->stats.blocks));
  json_object_set_new(o, "waves", json_integer(c->stats.waves));
  json_object_set_new(o, "warp_instructions_simulated", json_integer(c->stats.warp_instructions));
  json_object_set_new(o, "blocks_simulated", json_integer(c->stats.blocks_simulated));
  return o;
}

char *sp_report_json(const sp_report_nest *nests, int n, const sp_arch *arch, int top) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", json_string("schedpredict-report"));
  json_object_set_new(root, "schema_version", json_integer(2));
  json_object_set_new(root, "arch", json_string(arch->name));
  json_t *arr = json_array();
  for (int i = 0; i < n; i++) {
    const sp_nest *nest = nests[i].nest;
    const sp_rank_result *r = nests[i].rank;
    json_t *o = json_object();
    char loc[512];
    snprintf(loc, sizeof loc, "%s:%u:%u", nest->loc.file, nest->loc.line, nest->loc.col);
    json_object_set_new(o, "location", json_string(loc));
    json_object_set_new(o, "function", json_string(nest->function));
    if (!r) {
      json_object_set_new(o, "error", json_string(nests[i].error ? nests[i].error : "?"));
      json_array_append_new(arr, o);
      continue;
    }
    json_object_set_new(o, "candidates_evaluated", json_integer(r->n));
    json_object_set_new(o, "plateau", json_integer(sp_rank_plateau_size(r)));
    int regs = sp_rank_registers(r);
    json_object_set_new(o, "registers_per_thread", regs > 0 ? json_integer(regs) : json_null());
    double dflt = r->candidates[r->default_index].time.total_s;
    json_t *ranked = json_array();
    for (int k = 0; k < r->n && k < top; k++)
      json_array_append_new(ranked, sp_candidate_json(nest, r, &r->candidates[r->order[k]], dflt));
    json_object_set_new(o, "ranking", ranked);
    json_object_set_new(o, "compiler_default",
                        sp_candidate_json(nest, r, &r->candidates[r->default_index], dflt));
    if (nests[i].advice_json) {
      json_t *adv = json_loads(nests[i].advice_json, 0, NULL);
      if (adv) json_object_set_new(o, "advice", adv);
    }
    char why[768];
    sp_why(nest, r, why, sizeof why);
    json_object_set_new(o, "why", json_string(why));
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "nests", arr);
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  json_decref(root);
  return s;
}
