/* --emit-plan: C forms the generated CUDA must keep: bool, size_t, enum and typedef types, an
 * anonymous struct, restrict locals, two reduction clauses, a pointer derived in the body, an
 * index array bounded by the array it indexes. Emulated by tests/test_plan.c. */
#include <stdbool.h>
#include <stddef.h>
#define N 512
typedef struct { float re, im; } cplx;
typedef double real;
enum mode { FAST, SLOW };
static const int shift = 3;
void odd(cplx *restrict z, real *restrict out, bool flip, size_t n, enum mode m, const int *restrict idx, real tab[N])
{
    real acc = 0;
    int cnt = 0;
#pragma acc parallel loop reduction(+:acc) reduction(max:cnt) present(z[0:n], out[0:n], idx[0:n])
    for (size_t i = 0; i < n; i += 2) {
        real *restrict o = out;
        real v = flip ? z[i].re : z[i].im;
        if (m == FAST) v += tab[idx[i]] * shift;
        o[i] = v;
        acc += v;
        cnt = cnt > (int)i ? cnt : (int)i;
    }
}
