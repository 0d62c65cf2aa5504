// Squared Frobenius norm of a 4096² matrix, summed column by column as a Fortran port
// would: collapse(2) reduction(+:sum) with the row index innermost. Vector on the contiguous
// j needs the loops interchanged, and the reduction's clause on both loop directives.
// schedpredict-args:
#define N 4096

static double a[N][N];

double frobenius_sq(void)
{
    double sum = 0.0;
#pragma acc parallel loop collapse(2) reduction(+:sum) copyin(a)
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            sum += a[i][j] * a[i][j];
    return sum;
}
