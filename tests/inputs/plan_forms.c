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

/* a scratch array named in private(): a local array of each iteration, not a parameter */
void smooth3(double a[N][N], double b[N][N])
{
    double w[3];
    double t;
#pragma acc parallel loop collapse(2) private(w, t)
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++) {
            w[0] = a[i - 1][j];
            w[1] = a[i][j];
            w[2] = a[i + 1][j];
            t = 0;
            for (int k = 0; k < 3; k++) t += w[k];
            b[i][j] = t / 3;
        }
}
