// Jacobi (kernelGen suite, dissertation 7.4): 2-D 4-point stencil with a max-norm
// reduction, then a copy-back nest. Neighbouring threads share stencil points; the
// j-1/j+1 rows are reused only when the y loop is mapped inside a block.
// schedpredict-args:
#include <math.h>

#define N 4096

static double u[N][N];
static double unew[N][N];

double jacobi_sweep(void)
{
    double err = 0.0;
#pragma acc data copy(u) create(unew)
    {
#pragma acc parallel loop reduction(max:err)
        for (int j = 1; j < N - 1; j++) {
#pragma acc loop reduction(max:err)
            for (int i = 1; i < N - 1; i++) {
                unew[j][i] = 0.25 * (u[j][i - 1] + u[j][i + 1]
                                   + u[j - 1][i] + u[j + 1][i]);
                err = fmax(err, fabs(unew[j][i] - u[j][i]));
            }
        }
#pragma acc parallel loop
        for (int j = 1; j < N - 1; j++) {
#pragma acc loop
            for (int i = 1; i < N - 1; i++)
                u[j][i] = unew[j][i];
        }
    }
    return err;
}
