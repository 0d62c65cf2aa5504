/* schedvalidate: which candidates of a plan this run measures (--shard, --kernel, --candidates). */
#ifndef SV_SELECT_H
#define SV_SELECT_H
#include "sv_plan.h"

typedef struct {
  unsigned shard_k, shard_n;  /* run plan positions p with p mod n == k-1; 1/1 = all */
  const char *kernel_id;      /* NULL = every kernel */
  int64_t *cand_ids;          /* NULL = every candidate */
  size_t n_cand_ids;
} sv_selection;

typedef struct {
  size_t kernel, cand; /* indices into the plan */
} sv_item;

/* "K/N" with 1 <= K <= N. */
int sv_parse_shard(const char *s, unsigned *k, unsigned *n, char *err, size_t errlen);
/* "1,5,9": candidate ids (non-negative integers). *ids is malloc'ed. */
int sv_parse_id_list(const char *s, int64_t **ids, size_t *n, char *err, size_t errlen);
/* The selected candidates in run order: kernels in plan order; in each kernel the reference
   first when selected, then the rest in plan order. A candidate's plan position counts over all
   kernels in plan order; the shard filter applies to it. Returns the count (items malloc'ed, may
   be NULL for 0) or -1 with a message (a --kernel naming no kernel). */
long sv_select(const sv_plan *plan, const sv_selection *sel, sv_item **items, char *err,
               size_t errlen);
#endif
