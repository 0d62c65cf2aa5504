// PolyBench atax: y = A^T (A x) on a row-major m x n matrix given as a pointer with
// run-time sizes. Nest 1 reduces along rows (a[i*n + j], vector on the reduction loop);
// nest 2 reduces down columns, so the parallel j loop reads a coalesced row at a time.
// schedpredict-args: --param m=1900 --param n=2100
void kernel_atax(int m, int n, const double *restrict a, const double *restrict x,
                 double *restrict tmp, double *restrict y)
{
#pragma acc data copyin(a[0:m*n], x[0:n]) create(tmp[0:m]) copyout(y[0:n])
    {
#pragma acc parallel loop gang
        for (int i = 0; i < m; i++) {
            double s = 0.0;
#pragma acc loop vector reduction(+:s)
            for (int j = 0; j < n; j++)
                s += a[i * n + j] * x[j];
            tmp[i] = s;
        }
#pragma acc parallel loop gang vector
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int i = 0; i < m; i++)
                s += a[i * n + j] * tmp[i];
            y[j] = s;
        }
    }
}
