/* Imperfect nests joined into the band.
 *
 * OpenACC users write gang on a loop and vector on the one loop inside it even where the outer
 * body has statements around the inner loop (mvt's `s = x[i]; for j ...; x[i] = s`, or a row
 * factor loaded before the row's loop). The compilers run those statements once per gang
 * (vector-single mode) and the inner loop across the vector lanes. The model maps a band of
 * loops, so such an inner loop joins the band, marked imperfect, when it is parallel, runs at
 * least once in every iteration of the loop around it, and is the only loop of that loop's body.
 * The statements' references then take a guard on the inner loop's index: those before the loop
 * its first iteration, those after it its last (a step of 1 or -1 only), so one lane issues them
 * where the statements ran, as in vector-single mode.
 *
 * An imperfect loop takes thread dimensions only (the statements around it need its iterations
 * in one block), collapses with nothing and is not interchanged (traces/schedule.c,
 * advice/plan.c); the schedule space also runs it sequentially in every thread, as the nest ran
 * before it joined. The validation harness generates only the schedules that keep it sequential
 * (validation/plan.c). */
#include "analyzer/walk.h"

#include <stdlib.h>
#include <string.h>

static bool sp_before(const sp_srcloc *a, const sp_srcloc *b) {
  return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* Whether loop c (the only loop in the body of band loop c - 1) can join the band; *post: some
 * reference follows it. */
static bool sp_sinkable(const sp_nest *n, int c, bool *post) {
  const sp_loop *C = &n->loops[c];
  const int outer = c - 1;
  if (C->parent != outer || !C->parallel || C->trip_min < 1 || C->step == 0)
    return false;
  for (int k = c + 1; k < n->nloops; k++)
    if (n->loops[k].parent == outer) return false;
  *post = false;
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *ref = &n->refs[r];
    if (ref->nloops != c) continue; /* not of the outer body: one inside c lists c too */
    if (!sp_before(&ref->loc, &C->loc)) *post = true;
  }
  return !*post || C->step == 1 || C->step == -1;
}

/* Puts reference r inside loop c at the iteration where its statement ran (guard first: a negated
 * group's guards stay contiguous behind it); r->guards has room for one more. */
static void sp_sink_ref(sp_nest *n, sp_ref *r, int c, const sp_guard *first, const sp_guard *last) {
  memmove(r->guards + 1, r->guards, sizeof *r->guards * (size_t)r->nguards);
  r->guards[0] = sp_before(&r->loc, &n->loops[c].loc) ? *first : *last;
  r->nguards++;
  r->loops[r->nloops++] = c;
}

void sp_nb_sink_imperfect(sp_nb *nb) {
  sp_nest *n = nb->nest;
  for (int c = sp_nest_band_length(n); c > 0 && c < n->nloops; c = sp_nest_band_length(n)) {
    bool post;
    if (!sp_sinkable(n, c, &post)) return;
    sp_loop *C = &n->loops[c];
    sp_guard first = {.cmp = SP_CMP_EQ0}, last = {.cmp = SP_CMP_EQ0};
    sp_affine index;
    sp_affine_zero(&index);
    index.coef[c] = 1;
    if (!sp_affine_sub(&first.expr, &index, &C->lower) ||
        !sp_affine_sub(&last.expr, &index, &C->upper))
      return;
    for (int r = 0; r < n->nrefs; r++) {
      sp_ref *ref = &n->refs[r];
      if (ref->nloops != c) continue;
      sp_guard *grown = realloc(ref->guards, sizeof *grown * (size_t)(ref->nguards + 1));
      if (!grown) return; /* (nothing changed but the room) */
      ref->guards = grown;
    }
    for (int r = 0; r < n->nrefs; r++)
      if (n->refs[r].nloops == c) sp_sink_ref(n, &n->refs[r], c, &first, &last);
    C->band = C->imperfect = true;
    char msg[256];
    snprintf(msg, sizeof msg,
             "loop %s is not the only statement in the body of loop %s: it joins the band, and "
             "one lane runs the statements around it (OpenACC's vector-single mode)",
             C->index, n->loops[c - 1].index);
    sp_nb_note_quiet(nb, msg);
  }
}
