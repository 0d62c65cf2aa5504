// Pointer-arithmetic subscripts, as in code ported from old C: *(a + i*N + j) instead of
// a[i][j], and a row pointer taken in the outer loop (row = a + i*N, then row[j]).
// Both are affine in i, j; the second asks the analyzer to follow a local pointer.
// schedpredict-args:
#define N 4096

void axpby_ptr(double alpha, double beta, const double *a, double *b)
{
#pragma acc parallel loop collapse(2) present(a[0:N*N], b[0:N*N])
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            *(b + i * N + j) = alpha * *(a + i * N + j) + beta * *(b + i * N + j);
}

void row_sums_ptr(const double *a, double *sums)
{
#pragma acc parallel loop gang present(a[0:N*N], sums[0:N])
    for (int i = 0; i < N; i++) {
        const double *row = a + i * N;
        double s = 0.0;
#pragma acc loop vector reduction(+:s)
        for (int j = 0; j < N; j++)
            s += row[j];
        *(sums + i) = s;
    }
}
