/* Loads a compiler does not issue. A load of the bytes that an earlier load read, or an earlier
 * store wrote, in the same iteration with no store anywhere between them, takes the value from
 * a register: common subexpression elimination and store-to-load forwarding, which nvcc and
 * NVRTC do at -O3 (and GCC and nvc at their defaults). The model counts the memory instructions
 * a warp issues, so such a load leaves the nest's references. The H100 measured it: heat3d's 10
 * loads of A a point issue as 7 requests (A[i][j][k] four times), gesummv's 4 as 3 (x[j] twice),
 * gwv_explicit's 9 as 8, himeno's 32 as 31, jacobi's unew[j][i] read after its store not at all
 * (validation/results/h100/2026-11-23-model-d7c4d47/comparison.csv, global_load_requests).
 *
 * "The same bytes" is decided on the IR: the same array, access size, affine offset, enclosing
 * loops and guards. An irregular (indirect) access is never merged: its affine part says nothing
 * about the address. Any store between the two ends the reuse, whatever array it writes (without
 * restrict, two arrays may alias); a store that writes the same bytes under the same guards makes
 * its value the one later loads reuse.
 *
 * A load inside a sequential inner loop whose address and guards do not depend on that loop's
 * index, in a loop that stores nothing, is loaded once before the loop (loop-invariant code
 * motion): aos_particles' p[i].x, .y, .z in the j loop issue once per particle (the H100 counted
 * 4 requests an iteration of j, not 7), correlation's mean[j] once per column. It moves out of
 * every such loop, innermost first, to just before the loop's first reference. Band loops are
 * left alone: a schedule runs them in parallel or sequentially, and only the latter would hoist.
 * Irregular accesses stay: their address may change with the loop through a loaded index. */
#include "analyzer/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool sp_same_guard(const sp_guard *x, const sp_guard *y, int nloops) {
  return x->cmp == y->cmp && x->expr.constant == y->expr.constant &&
         x->modulus == y->modulus && x->remainder == y->remainder &&
         memcmp(x->expr.coef, y->expr.coef, sizeof x->expr.coef[0] * (size_t)nloops) == 0;
}

static bool sp_same_guards(const sp_ref *a, const sp_ref *b, int nloops) {
  if (a->nguards != b->nguards) return false;
  for (int g = 0; g < a->nguards; g++)
    if (!sp_same_guard(&a->guards[g], &b->guards[g], nloops) ||
        a->guards[g].negated_group != b->guards[g].negated_group)
      return false;
  return true;
}

/* The guards two references share (a prefix of both) where the rest of one is a conjunction and
 * the rest of the other that conjunction negated, as in the two branches of `if (c1 && c2)`:
 * together they run where the shared guards hold. -1 where they are no such pair. */
static int sp_branch_pair(const sp_ref *a, const sp_ref *b, int nloops) {
  if (a->nguards != b->nguards) return -1;
  int shared = 0;
  while (shared < a->nguards && sp_same_guard(&a->guards[shared], &b->guards[shared], nloops) &&
         a->guards[shared].negated_group == b->guards[shared].negated_group)
    shared++;
  if (shared == a->nguards) return -1;
  const sp_ref *plain = a->guards[shared].negated_group ? b : a, *other = plain == a ? b : a;
  const int group = other->guards[shared].negated_group;
  for (int g = shared; g < a->nguards; g++)
    if (plain->guards[g].negated_group || other->guards[g].negated_group != group || !group ||
        !sp_same_guard(&plain->guards[g], &other->guards[g], nloops))
      return -1;
  return shared;
}

/* The same bytes at every iteration, guards aside. */
static bool sp_same_place(const sp_ref *a, const sp_ref *b, int nloops) {
  return !a->irregular && !b->irregular && a->array == b->array && a->size == b->size &&
         a->offset.constant == b->offset.constant &&
         memcmp(a->offset.coef, b->offset.coef, sizeof a->offset.coef[0] * (size_t)nloops) == 0 &&
         a->nloops == b->nloops &&
         memcmp(a->loops, b->loops, sizeof a->loops[0] * (size_t)a->nloops) == 0;
}

static bool sp_same_bytes(const sp_ref *a, const sp_ref *b, int nloops) {
  return sp_same_place(a, b, nloops) && sp_same_guards(a, b, nloops);
}

static void sp_ref_release(sp_ref *r) {
  free(r->irregular_why);
  free(r->guards);
  free(r->text);
}

/* The loads a note names: "A[i] at 4:16, ..." (cut with "..." when long). */
typedef struct sp_ref_list {
  int n;
  size_t used;
  char text[400];
} sp_ref_list;

static void sp_ref_list_add(sp_ref_list *l, const sp_ref *r) {
  l->n++;
  if (l->used >= sizeof l->text) return;
  int w = snprintf(l->text + l->used, sizeof l->text - l->used, "%s%s at %u:%u",
                   l->used ? ", " : "", r->text ? r->text : "?", r->loc.line, r->loc.col);
  if (w > 0) l->used += (size_t)w;
}

static void sp_ref_list_note(sp_nb *nb, const sp_ref_list *l, const char *what) {
  if (!l->n) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%d load%s %s: %s%s", l->n, l->n == 1 ? "" : "s", what, l->text,
           l->used >= sizeof l->text ? "..." : "");
  sp_nb_note_quiet(nb, msg);
}

static bool sp_invariant_in(const sp_ref *r, int loop) {
  if (r->irregular || r->offset.coef[loop] != 0) return false;
  for (int g = 0; g < r->nguards; g++)
    if (r->guards[g].expr.coef[loop] != 0) return false;
  return true;
}

static bool sp_ref_in_loop(const sp_ref *r, int loop) {
  for (int k = 0; k < r->nloops; k++)
    if (r->loops[k] == loop) return true;
  return false;
}

/* Moves each loop-invariant load out of its sequential loops, listing it in `moved`. */
static void sp_hoist_invariant_loads(sp_nest *n, sp_ref_list *moved) {
  for (int i = 0; i < n->nrefs; i++) {
    bool any = false;
    for (;;) {
      sp_ref *r = &n->refs[i];
      if (r->access != SP_READ || r->nloops == 0) break;
      int L = r->loops[r->nloops - 1];
      if (n->loops[L].band || !sp_invariant_in(r, L)) break;
      int first = -1;
      bool stores = false;
      for (int j = 0; j < n->nrefs; j++) {
        if (!sp_ref_in_loop(&n->refs[j], L)) continue;
        if (first < 0) first = j;
        stores |= n->refs[j].access == SP_WRITE;
      }
      if (stores) break;
      sp_ref moving = *r;
      moving.nloops--;
      memmove(&n->refs[first + 1], &n->refs[first], sizeof *n->refs * (size_t)(i - first));
      n->refs[first] = moving;
      i = first; /* and on to the loop around it */
      any = true;
    }
    if (any) sp_ref_list_add(moved, &n->refs[i]);
  }
}

/* Drops the loads that repeat an available value, listing them in `dropped`. Two stores of the
 * same bytes in the two branches of an if also make the value available where the if's own
 * guards hold (both branches of `if (c) b[i] = x; else b[i] = 0;` before `b[i] += 1`). */
static void sp_drop_repeats(sp_nest *n, sp_ref_list *dropped) {
  /* refs[avail .. i-1] hold the values still in registers: the last store, if any, and the
   * loads kept after it; `both` the store of two branches where they end in one */
  int kept = 0, avail = 0, last_store = -1;
  sp_ref both;
  bool have_both = false;
  for (int i = 0; i < n->nrefs; i++) {
    sp_ref *r = &n->refs[i];
    if (r->access == SP_WRITE) {
      int shared = last_store >= 0 && sp_same_place(&n->refs[last_store], r, n->nloops)
                       ? sp_branch_pair(&n->refs[last_store], r, n->nloops)
                       : -1;
      have_both = shared >= 0;
      if (have_both) {
        both = *r;
        both.nguards = shared;
      }
      n->refs[kept] = *r;
      avail = last_store = kept++;
      continue;
    }
    bool repeat = have_both && sp_same_bytes(&both, r, n->nloops);
    for (int j = avail; j < kept && !repeat; j++) repeat = sp_same_bytes(&n->refs[j], r, n->nloops);
    if (!repeat) {
      n->refs[kept++] = *r;
      continue;
    }
    sp_ref_list_add(dropped, r);
    sp_ref_release(r);
  }
  n->nrefs = kept;
}

/* Whether load r of innermost sequential loop L reads, at each iteration, the bytes that store w
 * of the same loop wrote the iteration before: same array, size, loops and guards, the same
 * coefficients, and its start one step of L behind (x[i+1] read after x[i] was written, i
 * counting down). */
static bool sp_reads_last_store(const sp_nest *n, const sp_ref *r, const sp_ref *w, int L) {
  int64_t a = r->offset.coef[L], back;
  sp_ref behind = *w; /* where w wrote one iteration before */
  return w->access == SP_WRITE && a != 0 && !__builtin_mul_overflow(a, -n->loops[L].step, &back) &&
         !__builtin_add_overflow(w->offset.constant, back, &behind.offset.constant) &&
         sp_same_bytes(r, &behind, n->nloops);
}

/* Moves each load of an inner sequential loop that reads what the loop's previous iteration
 * stored (and no other store of the loop writes its array) before the loop, at the loop's first
 * iteration: compilers keep the stored value in a register for the next iteration (scalar
 * replacement), so only the first iteration loads. Lists them in `carried`. */
static void sp_forward_carried_loads(sp_nest *n, sp_ref_list *carried) {
  for (int i = 0; i < n->nrefs; i++) {
    sp_ref *r = &n->refs[i];
    if (r->access != SP_READ || r->nloops == 0) continue;
    int L = r->loops[r->nloops - 1];
    const sp_loop *loop = &n->loops[L];
    if (loop->band || !sp_loop_bounds_const(loop)) continue;
    int first = -1, stores = 0;
    bool carries = false;
    for (int j = 0; j < n->nrefs; j++) {
      const sp_ref *w = &n->refs[j];
      if (!sp_ref_in_loop(w, L)) continue;
      if (first < 0) first = j;
      if (w->access == SP_WRITE && w->array == r->array) {
        stores++;
        carries |= sp_reads_last_store(n, r, w, L);
      }
    }
    if (!carries || stores != 1) continue;
    sp_ref moving = *r;
    int64_t at;
    if (__builtin_mul_overflow(r->offset.coef[L], loop->lower.constant, &at) ||
        __builtin_add_overflow(moving.offset.constant, at, &moving.offset.constant))
      continue;
    moving.offset.coef[L] = 0;
    moving.nloops--;
    sp_ref_list_add(carried, r);
    memmove(&n->refs[first + 1], &n->refs[first], sizeof *n->refs * (size_t)(i - first));
    n->refs[first] = moving;
  }
}

void sp_nb_drop_repeated_loads(sp_nb *nb) {
  sp_nest *n = nb->nest;
  sp_ref_list dropped = {0}, moved = {0}, carried = {0};
  sp_drop_repeats(n, &dropped);
  sp_forward_carried_loads(n, &carried);
  sp_hoist_invariant_loads(n, &moved);
  sp_drop_repeats(n, &dropped); /* a moved load can repeat one before its loop */
  sp_ref_list_note(nb, &dropped,
                   "of bytes loaded or stored earlier in the iteration, with no store between, "
                   "counted as none (compilers reuse the value)");
  sp_ref_list_note(nb, &carried,
                   "of bytes that the previous iteration of their sequential loop stored, counted "
                   "once before the loop (compilers keep the stored value in a register)");
  sp_ref_list_note(nb, &moved,
                   "that no iteration of an inner sequential loop changes, in a loop that stores "
                   "nothing, counted once before the loop (compilers hoist them)");
}
