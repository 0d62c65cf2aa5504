/* Helpers shared by the traces stage's files (not part of the public API). */
#ifndef SCHEDPREDICT_TRACES_INTERNAL_H
#define SCHEDPREDICT_TRACES_INTERNAL_H

#include "schedpredict/traces.h"

/* Number of band loops (the perfectly nested chain 0..n-1), or -1 if the band flags do not form
 * such a chain. */
int sp_traces_band_count(const sp_nest *nest);

/* Iterations of a loop with constant bounds. */
int64_t sp_traces_const_trip(const sp_loop *l);
/* The thread coordinates (x, y, z) of linear thread id tid in a block (x fastest). */
void sp_traces_thread_coords(const int block[3], int tid, int64_t x[3]);

/* Hardware limits on the grid (CUDA): x <= 2^31-1, y and z <= 65535. */
#define SP_GRID_X_MAX INT64_C(2147483647)
#define SP_GRID_YZ_MAX INT64_C(65535)

#endif
