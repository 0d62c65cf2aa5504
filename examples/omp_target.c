// OpenMP offload form: `target teams distribute parallel for collapse(2)` on a rank-1
// update A += alpha * x y^T (BLAS dger). x[i] is shared along a row, y[j] along a column.
// The diagnostic pragma keeps gcc quiet when the file is built with -fopenacc only.
// schedpredict-args:
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

#define N 4096

void dger(double alpha, const double *restrict x, const double *restrict y,
          double *restrict a)
{
#pragma omp target teams distribute parallel for collapse(2) \
    map(to: x[0:N], y[0:N]) map(tofrom: a[0:N*N])
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[i * N + j] += alpha * x[i] * y[j];
}
